import type { Generated } from "kysely";
import type { FeedbackValue } from "../stores.js";
import type { TurnOutcome, TurnState } from "../turn.js";

/**
 * The tables as the query layer (Kysely) sees them, the same in SQLite and PostgreSQL: one
 * statement, built once, runs on either. Times are epoch ms (BIGINT in PostgreSQL, read back
 * as numbers: sql/postgres.ts), byte strings are Buffers (BLOB, BYTEA).
 */
export interface Schema {
  conversations: ConversationsTable;
  turns: TurnsTable;
  conversation_leases: ConversationLeasesTable;
  settings: SettingsTable;
  assistant_choices: AssistantChoicesTable;
  feedback: FeedbackTable;
  linked_tokens: LinkedTokensTable;
  installations: InstallationsTable;
  workspace_orgs: WorkspaceOrgsTable;
}

export interface SettingsTable {
  team: string;
  channel: string;
  user: string;
  model_override: string | null;
  reasoning_effort: string | null;
  max_steps: number | null;
  updated_at: number;
}

export interface AssistantChoicesTable {
  team: string;
  scope: "channel" | "person";
  key: string;
  assistant_id: string;
  updated_at: number;
}

export interface FeedbackTable {
  turn_id: string;
  user: string;
  value: FeedbackValue;
  pressed_at: number;
}

export interface LinkedTokensTable {
  team: string;
  user: string;
  sealed: Buffer;
  linked_at: number;
}

export interface ConversationsTable {
  /** Generated: SQLite's INTEGER PRIMARY KEY, PostgreSQL's identity. */
  id: Generated<number>;
  team: string;
  channel: string;
  thread_ts: string;
  assistant_id: string;
  service_thread_id: string | null;
  service_thread_owner: string | null;
  passed_through_ts: string | null;
  created_at: number;
}

/** A turn's row (store/turn-rows.ts maps it): lists and settings are JSON text in both. */
export interface TurnsTable {
  id: string;
  conversation_id: number;
  team: string;
  channel: string;
  thread_ts: string;
  message_ts: string;
  user: string;
  /** Null on SQLite turns recorded before the author's team was kept. */
  author_team: string | null;
  content: string;
  notes: string;
  state: TurnState;
  outcome: TurnOutcome | null;
  service_content: string | null;
  context_through_ts: string | null;
  service_message_id: string | null;
  run_id: string | null;
  settings: string | null;
  run_started_at: number | null;
  reply_post_attempted: number;
  reply_ts: string | null;
  reply_parts: string;
  model_used: string | null;
  error: string | null;
  stop_requested_by: string | null;
  created_at: number;
  updated_at: number;
  texts_purged_at: number | null;
}

export interface ConversationLeasesTable {
  conversation_id: number;
  holder: string;
  expires_at: number;
}

export interface InstallationsTable {
  enterprise: string;
  team: string;
  team_name: string | null;
  enterprise_name: string | null;
  app_id: string | null;
  bot_user_id: string;
  bot_id: string;
  /** The scopes, comma-separated. */
  bot_scopes: string;
  sealed_bot_token: Buffer;
  installer_user_id: string | null;
  installed_at: number;
}

export interface WorkspaceOrgsTable {
  team: string;
  enterprise: string;
}
