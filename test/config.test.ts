import { describe, expect, it } from "vitest";
import { ConfigError, configuredSecrets, loadConfig } from "../src/config.js";

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
    expect(config.limits.threadContextChars).toBe(40_000);
    expect(config.files).toMatchObject({
      maxFileBytes: 10 * 1_048_576,
      maxQuestionBytes: 20 * 1_048_576,
    });
  });

  it("streams answers where it can by default, within Tier 2 and Tier 4, and reads SLACK_STREAMING", () => {
    expect(loadConfig(base).slack.streaming).toEqual({
      enabled: true,
      startsPerMinute: 19,
      appendsPerMinute: 95,
    });
    const set = loadConfig({
      ...base,
      SLACK_STREAMING: "OFF",
      SLACK_STREAM_STARTS_PER_MINUTE: "5",
      SLACK_STREAM_APPENDS_PER_MINUTE: "50",
    });
    expect(set.slack.streaming).toEqual({
      enabled: false,
      startsPerMinute: 5,
      appendsPerMinute: 50,
    });
  });

  it("reads THREAD_CONTEXT_CHARS, where 0 turns the thread context off", () => {
    expect(loadConfig({ ...base, THREAD_CONTEXT_CHARS: "4000" }).limits.threadContextChars).toBe(
      4_000,
    );
    expect(loadConfig({ ...base, THREAD_CONTEXT_CHARS: "0" }).limits.threadContextChars).toBe(0);
  });

  it("reads the file limits in bytes, and refuses one that is not a size", () => {
    const config = loadConfig({ ...base, FILE_MAX_BYTES: "1000", MESSAGE_FILES_MAX_BYTES: "5000" });
    expect(config.files).toMatchObject({ maxFileBytes: 1_000, maxQuestionBytes: 5_000 });
    expect(() => loadConfig({ ...base, FILE_MAX_BYTES: "10MB" })).toThrow(
      "FILE_MAX_BYTES must be a whole number",
    );
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
    [{ ALLOWED_TEAM_IDS: "T0001 T0002" }, /^ALLOWED_TEAM_IDS is malformed: "T0001 T0002" is not/],
    [{ ALLOWED_TEAM_IDS: "T0001,acme" }, /^ALLOWED_TEAM_IDS is malformed: "acme" is not/],
    [{ ALLOWED_TEAM_IDS: ", ," }, /^ALLOWED_TEAM_IDS is malformed: it names no id/],
    [{ ALLOW_GUESTS: "no" }, /^ALLOW_GUESTS is malformed: it must be true or false/],
    [{ RETENTION_DAYS: "a month" }, /^RETENTION_DAYS is malformed: .*whole number/],
    [{ RETENTION_DAYS: "0" }, /^RETENTION_DAYS is malformed: .*between 1 and 3650/],
    [{ SLACK_STREAMING: "yes" }, /^SLACK_STREAMING is malformed: .*auto or off/],
    [{ SLACK_STREAM_STARTS_PER_MINUTE: "0" }, /^SLACK_STREAM_STARTS_PER_MINUTE is malformed/],
    [{ SLACK_STREAM_APPENDS_PER_MINUTE: "lots" }, /^SLACK_STREAM_APPENDS_PER_MINUTE is malformed/],
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

describe("loadConfig: who may use the bot", () => {
  it("answers the installation's own workspace and its guests by default", () => {
    expect(loadConfig(base).trust).toEqual({ allowedTeamIds: undefined, allowGuests: true });
    expect(loadConfig({ ...base, ALLOWED_TEAM_IDS: " " }).trust.allowedTeamIds).toBeUndefined();
  });

  it("reads ALLOWED_TEAM_IDS as workspace and org ids, and ALLOW_GUESTS", () => {
    const { trust } = loadConfig({
      ...base,
      ALLOWED_TEAM_IDS: "T0001, E0ORG ,T0001,TPARTNER",
      ALLOW_GUESTS: "FALSE",
    });
    expect(trust).toEqual({ allowedTeamIds: ["T0001", "E0ORG", "TPARTNER"], allowGuests: false });
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

describe("loadConfig: URLs that carry tokens", () => {
  it.each([
    ["ASSISTANT_API_URL", "http://assistant.example.com"],
    ["ASSISTANT_API_URL", "http://10.0.0.5:8787/"],
    ["ASSISTANT_API_URL", "http://[::2]:8787"],
    ["ASSISTANT_API_URL", "http://localhost.example.com"],
    ["ASSISTANT_API_URL", "http://127.0.0.1.nip.io"],
    ["SLACK_API_URL", "http://slack.com/api/"],
    ["SLACK_API_URL", "http://192.168.1.20:9999/api"],
  ])("refuses %s=%s: plain http off this machine", (name, value) => {
    const error = thrownBy(() => loadConfig({ ...base, [name]: value }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(String(error)).toBe(
      `ConfigError: ${name} is refused: plain http:// is allowed only for a loopback address (127.0.0.0/8, ::1, localhost); use https://.`,
    );
  });

  it.each([
    "http://127.0.0.1:8787",
    "http://127.5.6.7/",
    "http://127.1:8787",
    "http://localhost:8787",
    "http://[::1]:8787",
    "https://assistant.example.com",
    "https://10.0.0.5:8443",
  ])("accepts %s for both", (value) => {
    const config = loadConfig({ ...base, ASSISTANT_API_URL: value, SLACK_API_URL: value });
    expect(config.service.baseUrl).toBe(value.replace(/\/+$/, ""));
    expect(config.slack.apiUrl).toBe(value.endsWith("/") ? value : `${value}/`);
  });
});

describe("loadConfig: the ops routes", () => {
  const socket = { ...base, SLACK_APP_TOKEN: "xapp-1-abc" };

  it("serves them in Socket Mode on their own server, on 127.0.0.1 and PORT by default", () => {
    expect(loadConfig({ ...socket, PORT: "3100" }).ops).toEqual({
      server: { host: "127.0.0.1", port: 3100 },
      metricsToken: undefined,
    });
    expect(loadConfig({ ...socket, OPS_HOST: "0.0.0.0", OPS_PORT: "9100" }).ops.server).toEqual({
      host: "0.0.0.0",
      port: 9100,
    });
    expect(loadConfig({ ...socket, OPS_HOST: "::" }).ops.server?.host).toBe("::");
  });

  it("serves them on the Slack port in HTTP mode, unless OPS_PORT moves them", () => {
    expect(loadConfig(base).ops.server).toBeUndefined();
    expect(loadConfig({ ...base, OPS_PORT: "9100" }).ops.server).toEqual({
      host: "127.0.0.1",
      port: 9100,
    });
    expect(loadConfig({ ...base, OPS_PORT: "0", OPS_HOST: "::1" }).ops.server).toEqual({
      host: "::1",
      port: 0,
    });
  });

  it("reads METRICS_TOKEN and lists it among the secrets kept out of logs", () => {
    const config = loadConfig({
      ...socket,
      SLACK_SIGNING_SECRET: "shh",
      METRICS_TOKEN: "metrics-token-0123456789",
    });
    expect(config.ops.metricsToken).toBe("metrics-token-0123456789");
    expect(configuredSecrets(config).sort()).toEqual(
      ["xoxb-1-secret", "xapp-1-abc", "shh", "svc-token", "metrics-token-0123456789"].sort(),
    );
    expect(configuredSecrets(loadConfig(base)).sort()).toEqual(
      ["xoxb-1-secret", "shh", "svc-token"].sort(),
    );
  });

  it.each([
    [{ OPS_HOST: "localhost", OPS_PORT: "9100" }, /^OPS_HOST is malformed: .*IP address/],
    [{ OPS_HOST: "256.1.1.1", OPS_PORT: "9100" }, /^OPS_HOST is malformed/],
    [{ OPS_HOST: "0.0.0.0" }, /^OPS_HOST needs OPS_PORT in HTTP mode/],
    [{ OPS_PORT: "ninety" }, /^OPS_PORT is malformed/],
    [{ OPS_PORT: "70000" }, /^OPS_PORT is malformed/],
    [{ OPS_PORT: "3000" }, /^OPS_PORT must differ from PORT in HTTP mode/],
    [{ METRICS_TOKEN: "short" }, /^METRICS_TOKEN is malformed: .*at least 16/],
    [{ METRICS_TOKEN: "long enough but has spaces" }, /^METRICS_TOKEN is malformed/],
  ])("refuses %o with one sentence naming the variable", (change, message) => {
    const env = { ...base, ...change } as Record<string, string | undefined>;
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("does not echo a malformed METRICS_TOKEN", () => {
    const error = thrownBy(() => loadConfig({ ...base, METRICS_TOKEN: "very-secret x" }));
    expect(String(error)).not.toContain("very-secret");
  });
});

describe("loadConfig: many workspaces (OAuth)", () => {
  const KEY = Buffer.alloc(32, 7).toString("base64");
  const oauth = {
    SLACK_CLIENT_ID: "1111.2222",
    SLACK_CLIENT_SECRET: "client-secret-0123",
    SLACK_STATE_SECRET: "state-secret-0123456789",
    TOKEN_ENCRYPTION_KEY: KEY,
    ALLOWED_TEAM_IDS: "T0ONE,E0ORG",
  };
  const { SLACK_BOT_TOKEN: _token, ...withoutToken } = base;

  it("reads the three together, and SLACK_BOT_TOKEN becomes optional", () => {
    const config = loadConfig({ ...withoutToken, ...oauth });
    expect(config.slack.oauth).toEqual({
      clientId: "1111.2222",
      clientSecret: "client-secret-0123",
      stateSecret: "state-secret-0123456789",
      allowedTeamIds: ["T0ONE", "E0ORG"],
    });
    expect(config.trust.allowedTeamIds).toEqual(["T0ONE", "E0ORG"]);
    expect(config.slack.botToken).toBeUndefined();
    expect(loadConfig({ ...base, ...oauth }).slack.botToken).toBe("xoxb-1-secret");
    expect(loadConfig(base).slack.oauth).toBeUndefined();
  });

  it("lets people use their own tokens, each linked in their workspace", () => {
    const config = loadConfig({ ...withoutToken, ...oauth, IDENTITY_MODE: "personal" });
    expect(config.people.identityMode).toBe("personal");
    expect(config.slack.oauth).toBeDefined();
  });

  it("keeps the client and state secrets out of logs", () => {
    const secrets = configuredSecrets(loadConfig({ ...withoutToken, ...oauth }));
    expect(secrets).toEqual(
      expect.arrayContaining(["client-secret-0123", "state-secret-0123456789"]),
    );
    expect(secrets).not.toContain("1111.2222");
  });

  it.each([
    [
      { SLACK_CLIENT_ID: undefined },
      "SLACK_CLIENT_ID is required with SLACK_CLIENT_SECRET and SLACK_STATE_SECRET: installing the app in many workspaces takes all three (or none, for one workspace on SLACK_BOT_TOKEN).",
    ],
    [
      { SLACK_CLIENT_SECRET: " ", SLACK_STATE_SECRET: undefined },
      "SLACK_CLIENT_SECRET and SLACK_STATE_SECRET are required with SLACK_CLIENT_ID: installing the app in many workspaces takes all three (or none, for one workspace on SLACK_BOT_TOKEN).",
    ],
    [
      { TOKEN_ENCRYPTION_KEY: undefined },
      "SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET need TOKEN_ENCRYPTION_KEY: each workspace's bot token is kept only encrypted.",
    ],
    [{ SLACK_STATE_SECRET: "short" }, /^SLACK_STATE_SECRET is malformed: it must be at least 16/],
    [
      { SLACK_CLIENT_SECRET: "has a space" },
      "SLACK_CLIENT_SECRET is malformed: it must not contain spaces.",
    ],
    // The install page is public: who may install must be said, or anyone could.
    [
      { ALLOWED_TEAM_IDS: undefined },
      "ALLOWED_TEAM_IDS is required with SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET: it names the workspaces (T…) and Enterprise orgs (E…) that may install the app; an install by any other is refused.",
    ],
    [
      { ALLOWED_TEAM_IDS: " , " },
      "ALLOWED_TEAM_IDS is malformed: it names no id; give ids separated by commas.",
    ],
  ])("refuses %o with one sentence naming what is missing", (change, message) => {
    const env = { ...withoutToken, ...oauth, ...change } as Record<string, string | undefined>;
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("still wants SLACK_BOT_TOKEN without them, and never echoes a secret", () => {
    expect(() => loadConfig(withoutToken)).toThrow("SLACK_BOT_TOKEN is required but not set.");
    const error = thrownBy(() =>
      loadConfig({ ...withoutToken, ...oauth, SLACK_STATE_SECRET: "tiny-secret" }),
    );
    expect(String(error)).not.toContain("tiny-secret");
  });

  it("in Socket Mode serves the ops routes with the install pages on PORT, unless OPS_PORT moves them", () => {
    const socket = { ...withoutToken, ...oauth, SLACK_APP_TOKEN: "xapp-1-abc", PORT: "3100" };
    expect(loadConfig(socket).ops.server).toBeUndefined();
    expect(loadConfig({ ...socket, OPS_PORT: "9100" }).ops.server).toEqual({
      host: "127.0.0.1",
      port: 9100,
    });
  });
});
