import { isIP } from "node:net";
import { z } from "zod";
import {
  type DatabaseConfig,
  DatabaseSettingError,
  databaseSecrets,
  readDatabaseConfig,
} from "./config-database.js";
import {
  type OAuthConfig,
  OAuthSettingError,
  readOAuthConfig,
  wantsOAuth,
} from "./config-oauth.js";
import { type PeopleConfig, PeopleSettingError, readPeopleConfig } from "./config-people.js";

export type { OAuthConfig } from "./config-oauth.js";

export type { AssistantChoice, IdentityMode, PeopleConfig } from "./config-people.js";

/**
 * The only reader of the environment. Every setting is validated here; a missing or
 * malformed one stops the start with one sentence naming the variable. Secrets are kept
 * out of every message (we name the variable, never echo its value).
 */

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Config {
  slack: {
    /**
     * The bot token of the one workspace (SLACK_BOT_TOKEN). Required without `oauth`; with
     * it optional, and when set that workspace is kept as an installation too.
     */
    botToken: string | undefined;
    /**
     * Set → the app may be installed in many workspaces (GET /slack/install, GET
     * /slack/oauth_redirect), each answered with its own installation's bot token.
     */
    oauth: OAuthConfig | undefined;
    /** Set → Socket Mode; unset → HTTP mode. */
    appToken: string | undefined;
    signingSecret: string | undefined;
    /** Web API base URL with a trailing slash. */
    apiUrl: string;
    /** chat.update calls per minute per workspace the pacer may spend (Tier 3 ≈ 50). */
    updatesPerMinute: number;
    /**
     * Native streaming of answers (SLACK_STREAMING: `auto`, the default, streams an answer
     * where the budgets serve it best; `off` edits every answer).
     */
    streaming: {
      enabled: boolean;
      /** chat.startStream calls per minute per workspace, and as many chat.stopStream (Tier 2 ≈ 20). */
      startsPerMinute: number;
      /** chat.appendStream calls per minute per workspace (Tier 4 ≈ 100). */
      appendsPerMinute: number;
    };
  };
  /**
   * HTTP listen port (PORT, default 3000): Slack requests in HTTP mode, and the ops routes
   * wherever `ops.server` does not move them.
   */
  port: number;
  ops: {
    /**
     * The ops routes' own server (/healthz, /readyz, /metrics). Socket Mode: always, at
     * OPS_HOST (default 127.0.0.1) on OPS_PORT (default PORT). HTTP mode: only when OPS_PORT
     * is set; undefined means they are served on PORT by the Slack server, on every interface.
     */
    server: { host: string; port: number } | undefined;
    /** The bearer token /metrics requires (METRICS_TOKEN); undefined: /metrics is open. */
    metricsToken: string | undefined;
  };
  service: {
    baseUrl: string;
    token: string;
    assistantId: string;
    runStartsPerMinute: number;
    requestsPerMinute: number;
  };
  /** The SQLite file (DATABASE_PATH), unless `database.url` is set. */
  databasePath: string;
  /** PostgreSQL and replicas (config-database.ts). */
  database: DatabaseConfig;
  /**
   * How long a finished turn's texts (the question, what was posted to the service, notes)
   * are kept after it finished, ms (RETENTION_DAYS, default 30 days); then they are purged.
   * Feedback presses are deleted the same time after the press.
   */
  retentionMs: number;
  logLevel: LogLevel;
  /** Who may use the bot (contract: Trust). */
  trust: {
    /**
     * Workspace (`T…`) and Enterprise org (`E…`) ids whose people are answered
     * (ALLOWED_TEAM_IDS); undefined: the workspace the bot is installed in, and its org when
     * it has one (both from auth.test). Always set with `slack.oauth`, whose installs it limits.
     */
    allowedTeamIds: readonly string[] | undefined;
    /** Whether guests (restricted and ultra-restricted accounts) are answered (ALLOW_GUESTS, default true). */
    allowGuests: boolean;
  };
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
  /** People's own tokens, the identity mode and the assistants to choose from (config-people.ts). */
  people: PeopleConfig;
  /** Slack's agent surface: the app's Messages tab. */
  agent: {
    /**
     * The prompts offered to a person starting a conversation in the Messages tab
     * (SUGGESTED_PROMPTS; default {@link DEFAULT_SUGGESTED_PROMPTS}); no prompts: none offered.
     */
    suggestedPrompts: SuggestedPrompts;
  };
}

/** Prompts a person may click to ask; each sends its `message` as theirs. */
export interface SuggestedPrompts {
  /** Shown above the prompts. */
  title: string;
  /** At most four (Slack shows no more). */
  prompts: { title: string; message: string }[];
}

export const DEFAULT_SUGGESTED_PROMPTS: SuggestedPrompts = {
  title: "Try asking",
  prompts: [
    {
      title: "What can you do?",
      message: "What can you help me with? Give me three examples.",
    },
    {
      title: "Draft an update",
      message: "Help me write a short, clear update for my team. Ask me what it is about first.",
    },
    {
      title: "Explain simply",
      message: "Explain a technical topic to me in plain words. Ask me which topic first.",
    },
  ],
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

/**
 * Whether a URL's host is this machine: 127.0.0.0/8, ::1 or localhost. The WHATWG parser has
 * already written IPv4 in its canonical dotted form (`127.1` → `127.0.0.1`).
 */
function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

const url = (name: string) =>
  z
    .string()
    .trim()
    .refine((v) => /^https?:\/\/[^\s]+$/.test(v) && URL.canParse(v), {
      message: `${name} must be an http(s) URL`,
    });

/**
 * Plain http is refused unless it stays on this machine: the service token and the Slack
 * tokens travel in the headers of these requests, readable by anyone on the way.
 */
function readSecureUrl(env: Env, name: string, fallback?: string): string {
  const value = read(env, name, url(name), fallback);
  if (value.startsWith("https://") || isLoopback(new URL(value).hostname)) return value;
  throw new ConfigError(
    `${name} is refused: plain http:// is allowed only for a loopback address (127.0.0.0/8, ::1, localhost); use https://.`,
  );
}

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

/** ALLOWED_TEAM_IDS: ids separated by commas; unset or empty means the default. */
function teamIds(env: Env): string[] | undefined {
  const raw = optional(env, "ALLOWED_TEAM_IDS");
  if (raw === undefined) return undefined;
  const ids = raw
    .split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "");
  const wrong = ids.find((id) => !/^[TE][A-Z0-9]{2,}$/.test(id));
  if (wrong !== undefined || ids.length === 0) {
    throw new ConfigError(
      `ALLOWED_TEAM_IDS is malformed: ${wrong === undefined ? "it names no id" : `"${wrong}" is not a workspace (T…) or Enterprise org (E…) id`}; give ids separated by commas.`,
    );
  }
  return [...new Set(ids)];
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw new ConfigError(`${name} is malformed: it must be true or false.`);
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

/**
 * Where the ops routes are served. Socket Mode has no Slack server, so they always get their
 * own, on loopback unless the operator opens it: the bot needs no inbound connection there.
 * In HTTP mode they stay on the public Slack port unless OPS_PORT moves them.
 */
function opsServer(env: Env, socketMode: boolean, port: number): Config["ops"]["server"] {
  const host = read(
    env,
    "OPS_HOST",
    z
      .string()
      .trim()
      .refine((v) => isIP(v) !== 0, {
        message: "OPS_HOST must be an IP address to listen on, such as 127.0.0.1, 0.0.0.0 or ::",
      }),
    "127.0.0.1",
  );
  const opsPort =
    optional(env, "OPS_PORT") === undefined
      ? undefined
      : read(env, "OPS_PORT", positiveInt("OPS_PORT", 0, 65535));
  if (socketMode) return { host, port: opsPort ?? port };
  if (opsPort === undefined) {
    // A setting that would be silently ignored gives a false sense of privacy.
    if (optional(env, "OPS_HOST") !== undefined) {
      throw new ConfigError(
        "OPS_HOST needs OPS_PORT in HTTP mode: without it /healthz, /readyz and /metrics are served on PORT, on every interface.",
      );
    }
    return undefined;
  }
  if (opsPort !== 0 && opsPort === port) {
    throw new ConfigError("OPS_PORT must differ from PORT in HTTP mode (or be left unset).");
  }
  return { host, port: opsPort };
}

function metricsToken(env: Env): string | undefined {
  const value = optional(env, "METRICS_TOKEN");
  if (value !== undefined && (value.length < 16 || /\s/.test(value))) {
    throw new ConfigError(
      "METRICS_TOKEN is malformed: it must be at least 16 characters, without spaces.",
    );
  }
  return value;
}

const SHAPE = 'each prompt must be {"title": "…", "message": "…"}';
/** A short text of a prompt: `what` names it in the error. */
const promptText = (what: string, max: number) =>
  z
    .string({ error: SHAPE })
    .trim()
    .min(1, `${what} is empty`)
    .max(max, `${what} is over ${max} characters`);
const promptList = z
  .array(
    z.object(
      {
        title: promptText("a prompt's title", 100),
        message: promptText("a prompt's message", 4000),
      },
      { error: SHAPE },
    ),
    { error: "it must be a list of prompts, or an object with one" },
  )
  .max(4, "Slack shows at most four prompts");
const promptOffer = z.union([
  promptList.transform((prompts) => ({ title: DEFAULT_SUGGESTED_PROMPTS.title, prompts })),
  z.object({
    title: promptText("the list's title", 100).default(DEFAULT_SUGGESTED_PROMPTS.title),
    prompts: promptList,
  }),
]);

/**
 * SUGGESTED_PROMPTS: JSON, either a list of `{"title", "message"}` (at most four) or
 * `{"title": "…", "prompts": [...]}` to name the list too; `[]` offers none.
 */
function suggestedPrompts(env: Env): SuggestedPrompts {
  const raw = optional(env, "SUGGESTED_PROMPTS");
  if (raw === undefined) return DEFAULT_SUGGESTED_PROMPTS;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError(
      'SUGGESTED_PROMPTS is malformed: it must be JSON, e.g. [{"title":"Summarise","message":"Summarise this for me"}].',
    );
  }
  const parsed = promptOffer.safeParse(value);
  if (parsed.success) return parsed.data;
  // A union's own issue says only that no branch fits: the issue of the branch meant.
  const meant = typeof value === "object" && value !== null && !Array.isArray(value);
  const issues = (meant ? promptOffer.options[1] : promptList).safeParse(value).error?.issues;
  throw new ConfigError(`SUGGESTED_PROMPTS is malformed: ${issues?.[0]?.message ?? SHAPE}.`);
}

function oauth(
  env: Env,
  people: PeopleConfig,
  allowedTeamIds: readonly string[] | undefined,
): OAuthConfig | undefined {
  try {
    return readOAuthConfig(env, people.encryptionKey !== undefined, allowedTeamIds);
  } catch (error) {
    if (error instanceof OAuthSettingError) throw new ConfigError(error.message);
    throw error;
  }
}

function people(env: Env, assistantId: string): PeopleConfig {
  try {
    return readPeopleConfig(env, assistantId);
  } catch (error) {
    if (error instanceof PeopleSettingError) throw new ConfigError(error.message);
    throw error;
  }
}

function database(env: Env): DatabaseConfig {
  try {
    return readDatabaseConfig(env);
  } catch (error) {
    if (error instanceof DatabaseSettingError) throw new ConfigError(error.message);
    throw error;
  }
}

/**
 * Every secret the settings hold, for the log scrubber: whatever its shape, none of them may
 * reach a log line. A new secret setting belongs here too.
 */
export function configuredSecrets(config: Config): string[] {
  const { botToken, appToken, signingSecret, oauth } = config.slack;
  const secrets = [
    botToken,
    appToken,
    signingSecret,
    oauth?.clientSecret,
    oauth?.stateSecret,
    config.service.token,
    config.ops.metricsToken,
    // The key in both base64 alphabets, whichever the operator wrote.
    config.people.encryptionKey?.toString("base64"),
    config.people.encryptionKey?.toString("base64url"),
    ...databaseSecrets(config.database),
  ];
  return secrets.filter((s): s is string => s !== undefined && s !== "");
}

export function loadConfig(env: Env = process.env): Config {
  // Any of the OAuth settings makes SLACK_BOT_TOKEN optional; they are checked below.
  const botToken = token(env, "SLACK_BOT_TOKEN", "xoxb-", !wantsOAuth(env));
  const appToken = token(env, "SLACK_APP_TOKEN", "xapp-", false);
  const signingSecret = optional(env, "SLACK_SIGNING_SECRET");
  if (appToken === undefined && signingSecret === undefined) {
    throw new ConfigError(
      "SLACK_SIGNING_SECRET is required in HTTP mode (set it, or set SLACK_APP_TOKEN for Socket Mode).",
    );
  }
  let apiUrl = readSecureUrl(env, "SLACK_API_URL", "https://slack.com/api/");
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

  const port = read(env, "PORT", positiveInt("PORT", 0, 65535), "3000");
  const assistantId = read(env, "ASSISTANT_ID", z.string().trim().min(1));
  const peopleConfig = people(env, assistantId);
  const allowedTeamIds = teamIds(env);
  const oauthConfig = oauth(env, peopleConfig, allowedTeamIds);

  return {
    slack: {
      botToken,
      oauth: oauthConfig,
      appToken,
      signingSecret,
      apiUrl,
      updatesPerMinute: read(
        env,
        "SLACK_UPDATES_PER_MINUTE",
        positiveInt("SLACK_UPDATES_PER_MINUTE", 1, 1000),
        "47",
      ),
      streaming: {
        enabled:
          read(
            env,
            "SLACK_STREAMING",
            z
              .string()
              .trim()
              .toLowerCase()
              .pipe(z.enum(["auto", "off"], { message: "SLACK_STREAMING must be auto or off" })),
            "auto",
          ) === "auto",
        startsPerMinute: read(
          env,
          "SLACK_STREAM_STARTS_PER_MINUTE",
          positiveInt("SLACK_STREAM_STARTS_PER_MINUTE", 1, 1000),
          "19",
        ),
        appendsPerMinute: read(
          env,
          "SLACK_STREAM_APPENDS_PER_MINUTE",
          positiveInt("SLACK_STREAM_APPENDS_PER_MINUTE", 1, 1000),
          "95",
        ),
      },
    },
    port,
    ops: {
      // Socket Mode with OAuth has a public server on PORT (the install pages), as HTTP mode.
      server: opsServer(env, appToken !== undefined && oauthConfig === undefined, port),
      metricsToken: metricsToken(env),
    },
    service: {
      baseUrl: readSecureUrl(env, "ASSISTANT_API_URL").replace(/\/+$/, ""),
      token: serviceToken,
      assistantId,
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
    database: database(env),
    retentionMs:
      read(env, "RETENTION_DAYS", positiveInt("RETENTION_DAYS", 1, 3650), "30") * 86_400_000,
    logLevel,
    trust: {
      allowedTeamIds,
      allowGuests: flag(env, "ALLOW_GUESTS", true),
    },
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
    people: peopleConfig,
    agent: { suggestedPrompts: suggestedPrompts(env) },
  };
}
