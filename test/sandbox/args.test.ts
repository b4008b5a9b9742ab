import { describe, expect, it } from "vitest";
import { parseSandboxArgs, UsageError } from "../../sandbox/args.js";

describe("parseSandboxArgs", () => {
  it("has defaults for a chat", () => {
    expect(parseSandboxArgs([])).toEqual({
      say: undefined,
      answer: undefined,
      fail: undefined,
      tokensPerSecond: 50,
      length: undefined,
      queueDelayMs: 100,
      timeoutSeconds: 120,
      logPath: "./data/sandbox.log",
      logLevel: "info",
      replicas: 1,
      databaseUrl: undefined,
      help: false,
    });
  });

  it("reads --replicas, and --database-url before DATABASE_URL", () => {
    const env = { DATABASE_URL: "postgres://env@127.0.0.1/db" };
    expect(parseSandboxArgs(["--replicas", "2"], env)).toMatchObject({
      replicas: 2,
      databaseUrl: "postgres://env@127.0.0.1/db",
    });
    const flag = ["--replicas", "5", "--database-url", "postgresql://flag@127.0.0.1/x"];
    expect(parseSandboxArgs(flag, env).databaseUrl).toBe("postgresql://flag@127.0.0.1/x");
    expect(() => parseSandboxArgs(["--replicas", "6"])).toThrow(/--replicas must be .* 1 to 5/);
    expect(() => parseSandboxArgs(["--replicas", "0"])).toThrow(/--replicas/);
    expect(() => parseSandboxArgs(["--database-url", "mysql://secret@h/db"])).toThrow(
      /^--database-url \(or DATABASE_URL\) must be a postgres:\/\/ URL$/,
    );
  });

  it("reads every flag", () => {
    const args = parseSandboxArgs([
      "--say",
      "hello",
      "--answer",
      "Hi.",
      "--fail",
      "boom",
      "--tokens-per-second",
      "5",
      "--length",
      "3000",
      "--queue-delay",
      "0",
      "--timeout",
      "9",
      "--log",
      "/tmp/x.log",
      "--log-level",
      "debug",
    ]);
    expect(args).toMatchObject({
      say: "hello",
      answer: "Hi.",
      fail: "boom",
      tokensPerSecond: 5,
      length: 3000,
      queueDelayMs: 0,
      timeoutSeconds: 9,
      logPath: "/tmp/x.log",
      logLevel: "debug",
    });
    expect(parseSandboxArgs(["-h"]).help).toBe(true);
  });

  it("refuses unknown flags and bad values with a message naming the flag", () => {
    expect(() => parseSandboxArgs(["--nope"])).toThrow(UsageError);
    expect(() => parseSandboxArgs(["--tokens-per-second", "0"])).toThrow(/--tokens-per-second/);
    expect(() => parseSandboxArgs(["--length", "1.5"])).toThrow(/--length/);
    expect(() => parseSandboxArgs(["--say", "  "])).toThrow(/--say must not be empty/);
    expect(() => parseSandboxArgs(["--log-level", "loud"])).toThrow(/--log-level/);
    expect(() => parseSandboxArgs(["question"])).toThrow(UsageError);
  });
});
