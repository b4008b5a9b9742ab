import { type DatabaseConfig, databaseSecrets } from "./config-database.js";
import { oauthConfig } from "./config-oauth.js";
import { choices, type PeopleConfig } from "./config-people.js";
import { ConfigError, type Env, presence, readSettings } from "./config-setting.js";
import { SETTINGS } from "./config-settings.js";

export type { OAuthConfig } from "./config-oauth.js";
export type { AssistantChoice, IdentityMode, PeopleConfig } from "./config-people.js";
export { DEFAULT_SUGGESTED_PROMPTS, type SuggestedPrompts } from "./config-prompts.js";
export { ConfigError } from "./config-setting.js";

/**
 * The only reader of the environment: the variables of config-settings.ts, each validated
 * there, and the rules between them here. A missing or malformed one stops the start with one
 * sentence naming the variable; a secret's value is never quoted.
 */

/** The settings as the rest of the bot uses them, built from the variables. */
export type Config = ReturnType<typeof loadConfig>;
export type LogLevel = Config["logLevel"];

export function loadConfig(env: Env = process.env) {
  const v = readSettings(env, SETTINGS);
  const isSet = presence(env);
  if (v.IDENTITY_MODE !== "shared" && v.TOKEN_ENCRYPTION_KEY === undefined) {
    throw new ConfigError(
      `IDENTITY_MODE=${v.IDENTITY_MODE} needs TOKEN_ENCRYPTION_KEY: people's own tokens are kept only encrypted.`,
    );
  }
  const oauth = oauthConfig(
    v.SLACK_CLIENT_ID,
    v.SLACK_CLIENT_SECRET,
    v.SLACK_STATE_SECRET,
    v.TOKEN_ENCRYPTION_KEY !== undefined,
    v.ALLOWED_TEAM_IDS,
  );
  // Socket Mode with OAuth has a public server on PORT (the install pages), as HTTP mode.
  const privateOps = v.SLACK_APP_TOKEN !== undefined && oauth === undefined;
  const people: PeopleConfig = {
    encryptionKey: v.TOKEN_ENCRYPTION_KEY,
    identityMode: v.IDENTITY_MODE,
    assistants: choices(v.ASSISTANT_ID, v.ASSISTANTS),
    linkTokenHelp: v.LINK_TOKEN_HELP,
  };
  const database: DatabaseConfig = { url: v.DATABASE_URL, leaseTtlMs: v.LEASE_SECONDS };
  return {
    slack: {
      /** The one workspace's bot token; optional with `oauth`, its workspace then one installation. */
      botToken: v.SLACK_BOT_TOKEN,
      /** Set: the app may be installed in many workspaces, each answered with its own bot token. */
      oauth,
      /** Set → Socket Mode; unset → HTTP mode. */
      appToken: v.SLACK_APP_TOKEN,
      signingSecret: v.SLACK_SIGNING_SECRET,
      /** Web API base URL with a trailing slash. */
      apiUrl: v.SLACK_API_URL.endsWith("/") ? v.SLACK_API_URL : `${v.SLACK_API_URL}/`,
      /** chat.update calls per minute per workspace the pacer may spend (Tier 3 ≈ 50). */
      updatesPerMinute: v.SLACK_UPDATES_PER_MINUTE,
      streaming: {
        /** Native streaming of answers where the budgets serve it best (else every answer is edited). */
        enabled: v.SLACK_STREAMING === "auto",
        /** chat.startStream calls per minute per workspace, and as many chat.stopStream (Tier 2 ≈ 20). */
        startsPerMinute: v.SLACK_STREAM_STARTS_PER_MINUTE,
        /** chat.appendStream calls per minute per workspace (Tier 4 ≈ 100). */
        appendsPerMinute: v.SLACK_STREAM_APPENDS_PER_MINUTE,
      },
    },
    /** HTTP listen port: Slack requests in HTTP mode, and the ops routes unless `ops.server` moves them. */
    port: v.PORT,
    ops: {
      /** The ops routes' own server (/healthz, /readyz, /metrics); undefined: on PORT's. */
      server: opsServer(privateOps, v.OPS_HOST, isSet("OPS_HOST"), v.OPS_PORT, v.PORT),
      /** The bearer token /metrics requires; undefined: /metrics is open. */
      metricsToken: v.METRICS_TOKEN,
    },
    service: {
      baseUrl: v.ASSISTANT_API_URL.replace(/\/+$/, ""),
      token: v.ASSISTANT_API_TOKEN,
      assistantId: v.ASSISTANT_ID,
      runStartsPerMinute: v.ASSISTANT_RUN_STARTS_PER_MINUTE,
      requestsPerMinute: v.ASSISTANT_REQUESTS_PER_MINUTE,
    },
    /** The SQLite file, unless `database.url` is set. */
    databasePath: v.DATABASE_PATH,
    database,
    /**
     * How long a finished turn's texts (the question, what was posted, notes) are kept after it
     * finished, ms; then they are purged. Feedback presses are deleted the same time after.
     */
    retentionMs: v.RETENTION_DAYS,
    logLevel: v.LOG_LEVEL,
    /** Who may use the bot (contract: Trust). */
    trust: {
      /**
       * Workspace (`T…`) and Enterprise org (`E…`) ids whose people are answered; undefined: the
       * workspace the bot is installed in, and its org (from auth.test). Set with `slack.oauth`.
       */
      allowedTeamIds: v.ALLOWED_TEAM_IDS,
      /** Whether guests (restricted and ultra-restricted accounts) are answered. */
      allowGuests: v.ALLOW_GUESTS,
    },
    limits: {
      /** A person's message longer than this (characters) is answered with a note instead. */
      maxMessageChars: v.MAX_MESSAGE_CHARS,
      /** How long a run may go without reaching an end status before the bot gives up, ms. */
      runTimeoutMs: v.RUN_TIMEOUT_SECONDS,
      /** How long the bot keeps retrying an unreachable service for one turn, ms. */
      serviceOutageMs: v.SERVICE_OUTAGE_SECONDS,
      /** Most unfinished turns of one person in a workspace; past it a message gets a note. */
      maxQueuedTurnsPerPerson: v.MAX_QUEUED_TURNS_PER_PERSON,
      /** On SIGTERM, how long answers being written may take to finish, ms. */
      shutdownGraceMs: v.SHUTDOWN_GRACE_SECONDS,
      /**
       * Most characters of a thread's earlier messages and of shared files passed on before a
       * question; 0: none.
       */
      threadContextChars: v.THREAD_CONTEXT_CHARS,
    },
    files: {
      /** Largest file read, bytes. */
      maxFileBytes: v.FILE_MAX_BYTES,
      /** Most bytes read for one question, its own files and its thread's together. */
      maxQuestionBytes: v.MESSAGE_FILES_MAX_BYTES,
      /** The longest a PDF's text may take to read, ms. */
      pdfTimeoutMs: 20_000,
      /** The longest one download may take, ms. */
      downloadTimeoutMs: 30_000,
    },
    people,
    /** Slack's agent surface: the prompts offered in the app's Messages tab (none: none offered). */
    agent: { suggestedPrompts: v.SUGGESTED_PROMPTS },
  };
}

/**
 * Where the ops routes are served. Socket Mode has no Slack server, so they always get their
 * own, on loopback unless the operator opens it: the bot needs no inbound connection there.
 * In HTTP mode they stay on the public Slack port unless OPS_PORT moves them.
 */
function opsServer(
  privateOps: boolean,
  host: string,
  hostSet: boolean,
  opsPort: number | undefined,
  port: number,
): { host: string; port: number } | undefined {
  if (privateOps) return { host, port: opsPort ?? port };
  if (opsPort === undefined) {
    // A setting that would be silently ignored gives a false sense of privacy.
    if (hostSet) {
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
