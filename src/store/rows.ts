import type { RunSettings } from "../service/schemas.js";
import type {
  Conversation,
  Feedback,
  FeedbackValue,
  SealedToken,
  StoredInstallation,
} from "./stores.js";

/**
 * Rows as SQLite and PostgreSQL both hold them (the same columns, `snake_case`), and what each
 * means to the stores: one mapping for both databases, so a record reads back the same
 * whichever keeps it. The turns' are in turn-rows.ts.
 */

export interface ConversationRow {
  id: number;
  team: string;
  channel: string;
  thread_ts: string;
  assistant_id: string;
  service_thread_id: string | null;
  service_thread_owner: string | null;
  passed_through_ts: string | null;
}

export const toConversation = (r: ConversationRow): Conversation => ({
  id: r.id,
  team: r.team,
  channel: r.channel,
  threadTs: r.thread_ts,
  assistantId: r.assistant_id,
  serviceThreadId: r.service_thread_id,
  serviceThreadOwner: r.service_thread_owner,
  passedThroughTs: r.passed_through_ts,
});

export interface FeedbackRow {
  turn_id: string;
  user: string;
  value: FeedbackValue;
  pressed_at: number;
}

export const toFeedback = (row: FeedbackRow): Feedback => ({
  turnId: row.turn_id,
  user: row.user,
  value: row.value,
  at: row.pressed_at,
});

export interface LinkedTokenRow {
  team: string;
  user: string;
  sealed: Buffer;
  linked_at: number;
}

export const toToken = (r: LinkedTokenRow): SealedToken => ({
  team: r.team,
  user: r.user,
  sealed: r.sealed,
  linkedAt: r.linked_at,
});

/** A person's settings in one channel. */
export interface SettingsRow {
  model_override: string | null;
  reasoning_effort: string | null;
  max_steps: number | null;
}

/** The settings a row holds; no row: none set. */
export function toSettings(row: SettingsRow | undefined): RunSettings {
  const settings: RunSettings = {};
  if (row?.model_override) settings.modelOverride = row.model_override as "flash" | "max";
  if (row?.reasoning_effort) {
    settings.reasoning_effort = row.reasoning_effort as NonNullable<
      RunSettings["reasoning_effort"]
    >;
  }
  if (row?.max_steps) settings.maxSteps = row.max_steps;
  return settings;
}

/** A row of `installations` (SQLite and PostgreSQL alike). */
export interface InstallationRow {
  enterprise: string;
  team: string;
  team_name: string | null;
  enterprise_name: string | null;
  app_id: string | null;
  bot_user_id: string;
  bot_id: string;
  bot_scopes: string;
  sealed_bot_token: Buffer;
  installer_user_id: string | null;
  installed_at: number;
}

export const toInstallation = (r: InstallationRow): StoredInstallation => ({
  enterprise: r.enterprise,
  team: r.team,
  teamName: r.team_name,
  enterpriseName: r.enterprise_name,
  appId: r.app_id,
  botUserId: r.bot_user_id,
  botId: r.bot_id,
  botScopes: r.bot_scopes === "" ? [] : r.bot_scopes.split(","),
  sealedBotToken: r.sealed_bot_token,
  installerUserId: r.installer_user_id,
  installedAt: r.installed_at,
});
