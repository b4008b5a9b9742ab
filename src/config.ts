import { z } from "zod";

/**
 * The only reader of the environment. Every setting is validated here; a missing or
 * malformed one stops the start with one sentence naming the variable. Secrets are kept
 * out of every message (we name the variable, never echo its value).
 */

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Config {
  slack: {
    botToken: string;
    /** Set → Socket Mode; unset → HTTP mode. */
    appToken: string | undefined;
    signingSecret: string | undefined;
    /** Web API base URL with a trailing slash. */
    apiUrl: string;
    /** chat.update calls per minute per workspace the pacer may spend (Tier 3 ≈ 50). */
    updatesPerMinute: number;
  };
  /** HTTP listen port: Slack requests in HTTP mode; health and metrics in both modes. */
  port: number;
  service: {
    baseUrl: string;
    token: string;
    assistantId: string;
    runStartsPerMinute: number;
    requestsPerMinute: number;
  };
  databasePath: string;
  /**
   * How long a finished turn's texts (the question, what was posted to the service, notes)
   * are kept after it finished, ms (RETENTION_DAYS, default 30 days); then they are purged.
   */
  retentionMs: number;
  logLevel: LogLevel;
  limits: {
    /** A person's message longer than this (characters) is answered with a note instead. */
    maxMessageChars: number;
    /** How long a run may go without reaching an end status before the bot gives up, ms. */
    runTimeoutMs: number;
    /** How long the bot keeps retrying an unreachable service for one turn, ms. */
    serviceOutageMs: number;
    /**
     * Most unfinished turns one person may have in a workspace; a message past it gets a
     * short note instead of an answer (MAX_QUEUED_TURNS_PER_PERSON, default 5).
     */
    maxQueuedTurnsPerPerson: number;
    /**
     * On SIGTERM, how long answers being written may take to finish before the rest is left
     * for the next start, ms (SHUTDOWN_GRACE_SECONDS, default 10 s).
     */
    shutdownGraceMs: number;
    /**
     * Most characters of a thread's earlier messages passed on before a question
     * (THREAD_CONTEXT_CHARS, default 12000); 0 passes none.
     */
    threadContextChars: number;
  };
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

const url = (name: string) =>
  z
    .string()
    .trim()
    .refine((v) => /^https?:\/\/[^\s]+$/.test(v) && URL.canParse(v), {
      message: `${name} must be an http(s) URL`,
    });

const positiveInt = (name: string, min = 1, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, { message: `${name} must be a whole number` })
    .transform(Number)
    .refine((n) => n >= min && n <= max, {
      message: `${name} must be between ${min} and ${max}`,
    });

function read<T>(env: Env, name: string, schema: z.ZodType<T>, fallback?: string): T {
  const raw = env[name];
  const value = raw === undefined || raw.trim() === "" ? fallback : raw;
  if (value === undefined) throw new ConfigError(`${name} is required but not set.`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]?.message ?? "is malformed";
    throw new ConfigError(`${name} is malformed: ${issue}.`);
  }
  return parsed.data;
}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === "" ? undefined : raw;
}

function token(env: Env, name: string, prefix: string, required: boolean): string | undefined {
  const value = optional(env, name);
  if (value === undefined) {
    if (required) throw new ConfigError(`${name} is required but not set.`);
    return undefined;
  }
  if (!value.startsWith(prefix) || /\s/.test(value)) {
    throw new ConfigError(`${name} is malformed: it should start with "${prefix}".`);
  }
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const botToken = token(env, "SLACK_BOT_TOKEN", "xoxb-", true) as string;
  const appToken = token(env, "SLACK_APP_TOKEN", "xapp-", false);
  const signingSecret = optional(env, "SLACK_SIGNING_SECRET");
  if (appToken === undefined && signingSecret === undefined) {
    throw new ConfigError(
      "SLACK_SIGNING_SECRET is required in HTTP mode (set it, or set SLACK_APP_TOKEN for Socket Mode).",
    );
  }
  let apiUrl = read(env, "SLACK_API_URL", url("SLACK_API_URL"), "https://slack.com/api/");
  if (!apiUrl.endsWith("/")) apiUrl += "/";

  const serviceToken = optional(env, "ASSISTANT_API_TOKEN");
  if (serviceToken === undefined)
    throw new ConfigError("ASSISTANT_API_TOKEN is required but not set.");
  if (/\s/.test(serviceToken)) {
    throw new ConfigError("ASSISTANT_API_TOKEN is malformed: it must not contain spaces.");
  }
  const logLevel = read(
    env,
    "LOG_LEVEL",
    z
      .string()
      .trim()
      .toLowerCase()
      .pipe(
        z.enum(["debug", "info", "warn", "error"], {
          message: "LOG_LEVEL must be debug, info, warn or error",
        }),
      ),
    "info",
  );

  return {
    slack: {
      botToken,
      appToken,
      signingSecret,
      apiUrl,
      updatesPerMinute: read(
        env,
        "SLACK_UPDATES_PER_MINUTE",
        positiveInt("SLACK_UPDATES_PER_MINUTE", 1, 1000),
        "40",
      ),
    },
    port: read(env, "PORT", positiveInt("PORT", 0, 65535), "3000"),
    service: {
      baseUrl: read(env, "ASSISTANT_API_URL", url("ASSISTANT_API_URL")).replace(/\/+$/, ""),
      token: serviceToken,
      assistantId: read(env, "ASSISTANT_ID", z.string().trim().min(1)),
      runStartsPerMinute: read(
        env,
        "ASSISTANT_RUN_STARTS_PER_MINUTE",
        positiveInt("ASSISTANT_RUN_STARTS_PER_MINUTE"),
        "20",
      ),
      requestsPerMinute: read(
        env,
        "ASSISTANT_REQUESTS_PER_MINUTE",
        positiveInt("ASSISTANT_REQUESTS_PER_MINUTE"),
        "600",
      ),
    },
    databasePath: read(env, "DATABASE_PATH", z.string().trim().min(1), "./data/bridge.db"),
    retentionMs:
      read(env, "RETENTION_DAYS", positiveInt("RETENTION_DAYS", 1, 3650), "30") * 86_400_000,
    logLevel,
    limits: {
      maxMessageChars: read(env, "MAX_MESSAGE_CHARS", positiveInt("MAX_MESSAGE_CHARS"), "20000"),
      runTimeoutMs:
        read(env, "RUN_TIMEOUT_SECONDS", positiveInt("RUN_TIMEOUT_SECONDS"), "900") * 1000,
      serviceOutageMs:
        read(env, "SERVICE_OUTAGE_SECONDS", positiveInt("SERVICE_OUTAGE_SECONDS"), "120") * 1000,
      maxQueuedTurnsPerPerson: read(
        env,
        "MAX_QUEUED_TURNS_PER_PERSON",
        positiveInt("MAX_QUEUED_TURNS_PER_PERSON", 1, 1000),
        "5",
      ),
      shutdownGraceMs:
        read(env, "SHUTDOWN_GRACE_SECONDS", positiveInt("SHUTDOWN_GRACE_SECONDS", 0, 3600), "10") *
        1000,
      threadContextChars: read(
        env,
        "THREAD_CONTEXT_CHARS",
        positiveInt("THREAD_CONTEXT_CHARS", 0, 200_000).refine((n) => n === 0 || n >= 500, {
          message: "THREAD_CONTEXT_CHARS must be 0 (off) or at least 500",
        }),
        "12000",
      ),
    },
  };
}
