import { z } from "zod";
import { leaseSeconds, postgresUrl } from "./config-database.js";
import * as kind from "./config-kinds.js";
import { stateSecret, withoutOAuth, withTheOtherOAuthSettings } from "./config-oauth.js";
import { assistantChoices, DEFAULT_LINK_TOKEN_HELP, encryptionKey } from "./config-people.js";
import { DEFAULT_SUGGESTED_PROMPTS, suggestedPrompts } from "./config-prompts.js";
import type { Setting } from "./config-setting.js";

/**
 * Every environment variable the bot reads, each once: its name, its kind of value (which
 * says its unit and its error), its default and when it is required. They are read in this
 * order, so a start with several problems names the first of them; the rules between
 * variables are in config.ts. README.md's configuration table describes each one.
 */
export const SETTINGS = {
  SLACK_BOT_TOKEN: { parse: kind.slackToken("xoxb-"), required: withoutOAuth },
  SLACK_APP_TOKEN: { parse: kind.slackToken("xapp-") },
  SLACK_SIGNING_SECRET: {
    parse: kind.text,
    required: {
      when: (isSet) => !isSet("SLACK_APP_TOKEN"),
      missing: () =>
        "SLACK_SIGNING_SECRET is required in HTTP mode (set it, or set SLACK_APP_TOKEN for Socket Mode).",
    },
  },
  SLACK_API_URL: { parse: kind.secureUrl, default: "https://slack.com/api/" },
  ASSISTANT_API_TOKEN: { parse: kind.word, required: true },
  LOG_LEVEL: { parse: kind.oneOf(["debug", "info", "warn", "error"]), default: "info" },
  PORT: { parse: kind.wholeNumber(0, 65_535), default: "3000" },
  ASSISTANT_ID: { parse: kind.text, required: true },
  TOKEN_ENCRYPTION_KEY: { parse: encryptionKey },
  IDENTITY_MODE: { parse: kind.oneOf(["shared", "either", "personal"], "it"), default: "shared" },
  ASSISTANTS: { parse: assistantChoices },
  LINK_TOKEN_HELP: {
    parse: () => z.string().max(1_000, "it is over 1,000 characters"),
    default: DEFAULT_LINK_TOKEN_HELP,
  },
  ALLOWED_TEAM_IDS: { parse: kind.teamIds },
  SLACK_CLIENT_ID: { parse: kind.word, required: withTheOtherOAuthSettings },
  SLACK_CLIENT_SECRET: { parse: kind.word, required: withTheOtherOAuthSettings },
  SLACK_STATE_SECRET: { parse: stateSecret, required: withTheOtherOAuthSettings },
  SLACK_UPDATES_PER_MINUTE: { parse: kind.perMinute(1, 1000), default: "47" },
  SLACK_STREAMING: { parse: kind.oneOf(["auto", "off"]), default: "auto" },
  SLACK_STREAM_STARTS_PER_MINUTE: { parse: kind.perMinute(1, 1000), default: "19" },
  SLACK_STREAM_APPENDS_PER_MINUTE: { parse: kind.perMinute(1, 1000), default: "95" },
  OPS_HOST: { parse: kind.ipAddress, default: "127.0.0.1" },
  OPS_PORT: { parse: kind.wholeNumber(0, 65_535) },
  METRICS_TOKEN: {
    parse: () =>
      z.string().refine((v) => v.length >= 16 && !/\s/.test(v), {
        message: "it must be at least 16 characters, without spaces",
      }),
  },
  ASSISTANT_API_URL: { parse: kind.secureUrl, required: true },
  ASSISTANT_RUN_STARTS_PER_MINUTE: { parse: kind.perMinute(), default: "20" },
  ASSISTANT_REQUESTS_PER_MINUTE: { parse: kind.perMinute(), default: "600" },
  DATABASE_PATH: { parse: kind.text, default: "./data/bridge.db" },
  DATABASE_URL: { parse: postgresUrl },
  LEASE_SECONDS: { parse: leaseSeconds, default: "15" },
  RETENTION_DAYS: { parse: kind.days(1, 3650), default: "30" },
  ALLOW_GUESTS: { parse: kind.flag, default: "true" },
  MAX_MESSAGE_CHARS: { parse: kind.wholeNumber(), default: "20000" },
  RUN_TIMEOUT_SECONDS: { parse: kind.seconds(), default: "900" },
  SERVICE_OUTAGE_SECONDS: { parse: kind.seconds(), default: "120" },
  MAX_QUEUED_TURNS_PER_PERSON: { parse: kind.wholeNumber(1, 1000), default: "5" },
  SHUTDOWN_GRACE_SECONDS: { parse: kind.seconds(0, 3600), default: "10" },
  THREAD_CONTEXT_CHARS: { parse: kind.offOrAtLeast(500, 200_000), default: "40000" },
  FILE_MAX_BYTES: { parse: kind.wholeNumber(1, 100 * 1_048_576), default: String(10 * 1_048_576) },
  MESSAGE_FILES_MAX_BYTES: {
    parse: kind.wholeNumber(1, 500 * 1_048_576),
    default: String(20 * 1_048_576),
  },
  SUGGESTED_PROMPTS: {
    parse: suggestedPrompts,
    default: JSON.stringify(DEFAULT_SUGGESTED_PROMPTS),
  },
} satisfies Record<string, Setting<unknown>>;
