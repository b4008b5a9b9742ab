import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

const base = {
  SLACK_BOT_TOKEN: "xoxb-1-secret",
  SLACK_SIGNING_SECRET: "shh",
  ASSISTANT_API_URL: "http://127.0.0.1:8787/",
  ASSISTANT_API_TOKEN: "svc-token",
  ASSISTANT_ID: "asst-1",
};

/** What `load` threw; undefined when it returned. */
function thrownBy(load: () => unknown): unknown {
  try {
    load();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("loadConfig", () => {
  it("reads the contract's variables with their defaults", () => {
    const config = loadConfig(base);
    expect(config.slack.appToken).toBeUndefined();
    expect(config.slack.apiUrl).toBe("https://slack.com/api/");
    expect(config.port).toBe(3000);
    expect(config.service.baseUrl).toBe("http://127.0.0.1:8787");
    expect(config.databasePath).toBe("./data/bridge.db");
    expect(config.logLevel).toBe("info");
    expect(config.limits.threadContextChars).toBe(12_000);
  });

  it("reads THREAD_CONTEXT_CHARS, where 0 turns the thread context off", () => {
    expect(loadConfig({ ...base, THREAD_CONTEXT_CHARS: "4000" }).limits.threadContextChars).toBe(
      4_000,
    );
    expect(loadConfig({ ...base, THREAD_CONTEXT_CHARS: "0" }).limits.threadContextChars).toBe(0);
  });

  it("reads RETENTION_DAYS, 30 days by default, as milliseconds", () => {
    expect(loadConfig(base).retentionMs).toBe(30 * 86_400_000);
    expect(loadConfig({ ...base, RETENTION_DAYS: "7" }).retentionMs).toBe(7 * 86_400_000);
  });

  it("adds the trailing slash to SLACK_API_URL and selects Socket Mode by SLACK_APP_TOKEN", () => {
    const config = loadConfig({
      ...base,
      SLACK_SIGNING_SECRET: "",
      SLACK_APP_TOKEN: "xapp-1-abc",
      SLACK_API_URL: "http://127.0.0.1:9999/api",
      LOG_LEVEL: "DEBUG",
    });
    expect(config.slack.appToken).toBe("xapp-1-abc");
    expect(config.slack.apiUrl).toBe("http://127.0.0.1:9999/api/");
    expect(config.logLevel).toBe("debug");
  });

  it.each([
    [{ SLACK_BOT_TOKEN: undefined }, /^SLACK_BOT_TOKEN is required/],
    [{ SLACK_BOT_TOKEN: "xoxp-user-token" }, /^SLACK_BOT_TOKEN is malformed/],
    [{ SLACK_SIGNING_SECRET: undefined }, /^SLACK_SIGNING_SECRET is required in HTTP mode/],
    [{ SLACK_APP_TOKEN: "nope" }, /^SLACK_APP_TOKEN is malformed/],
    [{ ASSISTANT_API_URL: undefined }, /^ASSISTANT_API_URL is required/],
    [{ ASSISTANT_API_URL: "not a url" }, /^ASSISTANT_API_URL is malformed/],
    [{ ASSISTANT_API_TOKEN: "" }, /^ASSISTANT_API_TOKEN is required/],
    [{ ASSISTANT_ID: " " }, /^ASSISTANT_ID is required/],
    [{ PORT: "eighty" }, /^PORT is malformed/],
    [{ PORT: "70000" }, /^PORT is malformed/],
    [{ LOG_LEVEL: "verbose" }, /^LOG_LEVEL is malformed/],
    [{ SLACK_API_URL: "ftp://x" }, /^SLACK_API_URL is malformed/],
    [{ THREAD_CONTEXT_CHARS: "lots" }, /^THREAD_CONTEXT_CHARS is malformed/],
    [{ THREAD_CONTEXT_CHARS: "100" }, /^THREAD_CONTEXT_CHARS is malformed: .*0 \(off\)/],
    [{ THREAD_CONTEXT_CHARS: "999999" }, /^THREAD_CONTEXT_CHARS is malformed/],
    [{ RETENTION_DAYS: "a month" }, /^RETENTION_DAYS is malformed: .*whole number/],
    [{ RETENTION_DAYS: "0" }, /^RETENTION_DAYS is malformed: .*between 1 and 3650/],
  ])("refuses %o with one sentence naming the variable", (change, message) => {
    const env = { ...base, ...change } as Record<string, string | undefined>;
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each([
    ["SLACK_BOT_TOKEN", "xoxp-very-secret-value"],
    ["SLACK_APP_TOKEN", "xoxb-very-secret-value"],
    ["ASSISTANT_API_TOKEN", "very-secret value"],
  ])("refuses a malformed %s without echoing it", (name, secret) => {
    const error = thrownBy(() => loadConfig({ ...base, [name]: secret }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toMatch(new RegExp(`^ConfigError: ${name} is malformed`));
    expect(String(error)).not.toContain("very-secret");
  });
});

describe("loadConfig: durability and safety limits", () => {
  it("reads the limits with their defaults", () => {
    const { limits } = loadConfig(base);
    expect(limits.maxMessageChars).toBe(20_000);
    expect(limits.runTimeoutMs).toBe(900_000);
    expect(limits.serviceOutageMs).toBe(120_000);
    expect(limits.maxQueuedTurnsPerPerson).toBe(5);
    expect(limits.shutdownGraceMs).toBe(10_000);
  });

  it("reads MAX_QUEUED_TURNS_PER_PERSON and SHUTDOWN_GRACE_SECONDS (0: no grace)", () => {
    const { limits } = loadConfig({
      ...base,
      MAX_QUEUED_TURNS_PER_PERSON: "12",
      SHUTDOWN_GRACE_SECONDS: "0",
      RUN_TIMEOUT_SECONDS: "1",
      SERVICE_OUTAGE_SECONDS: "1",
    });
    expect(limits.maxQueuedTurnsPerPerson).toBe(12);
    expect(limits.shutdownGraceMs).toBe(0);
    expect(limits.runTimeoutMs).toBe(1_000);
    expect(limits.serviceOutageMs).toBe(1_000);
  });

  it.each([
    [
      { MAX_QUEUED_TURNS_PER_PERSON: "0" },
      /^MAX_QUEUED_TURNS_PER_PERSON is malformed: .*between 1 and 1000/,
    ],
    [{ MAX_QUEUED_TURNS_PER_PERSON: "lots" }, /^MAX_QUEUED_TURNS_PER_PERSON is malformed/],
    [{ MAX_QUEUED_TURNS_PER_PERSON: "1001" }, /^MAX_QUEUED_TURNS_PER_PERSON is malformed/],
    [{ SHUTDOWN_GRACE_SECONDS: "-1" }, /^SHUTDOWN_GRACE_SECONDS is malformed/],
    [{ SHUTDOWN_GRACE_SECONDS: "3601" }, /^SHUTDOWN_GRACE_SECONDS is malformed/],
    [{ RUN_TIMEOUT_SECONDS: "0" }, /^RUN_TIMEOUT_SECONDS is malformed/],
    [{ SERVICE_OUTAGE_SECONDS: "1.5" }, /^SERVICE_OUTAGE_SECONDS is malformed/],
    [{ MAX_MESSAGE_CHARS: "0" }, /^MAX_MESSAGE_CHARS is malformed/],
  ])("refuses %o with one sentence naming the variable", (change, message) => {
    const env = { ...base, ...change } as Record<string, string | undefined>;
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
