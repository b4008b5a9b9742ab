import type { Generated } from "kysely";
import type { ConversationRow, InstallationRow } from "../rows.js";
import type { FeedbackValue } from "../stores.js";
import type { TurnRow } from "../turn-rows.js";

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

/** A conversation's row (rows.ts maps it), its id made by the database, and when it was made. */
export interface ConversationsTable extends Omit<ConversationRow, "id"> {
  /** Generated: SQLite's INTEGER PRIMARY KEY, PostgreSQL's identity. */
  id: Generated<number>;
  created_at: number;
}

/** A turn's row as store/turn-rows.ts maps it, and the two columns only the database reads. */
export interface TurnsTable extends TurnRow {
  updated_at: number;
  texts_purged_at: number | null;
}

export interface ConversationLeasesTable {
  conversation_id: number;
  holder: string;
  expires_at: number;
  /** Who held it before its last claim; null when that claim made the row. */
  taken_from: string | null;
}

export type InstallationsTable = InstallationRow;

export interface WorkspaceOrgsTable {
  team: string;
  enterprise: string;
}
