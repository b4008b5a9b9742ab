import type { SharedFile } from "../files/kinds.js";
import type { RunSettings } from "../service/schemas.js";
import type { Turn, TurnOutcome, TurnState } from "./turn.js";

/**
 * A turn as a row of the `turns` table, the same in SQLite and PostgreSQL: lists (notes,
 * reply parts) and the run settings are JSON text in both, so one mapping serves both and a
 * turn reads back the same whichever database keeps it.
 */
export interface TurnRow {
  id: string;
  conversation_id: number;
  team: string;
  channel: string;
  thread_ts: string;
  message_ts: string;
  user: string;
  /** Null on SQLite turns recorded before the author's team was kept: it was `team`. */
  author_team: string | null;
  content: string;
  /** The question's files, as JSON (SharedFile[]); "[]" on turns recorded before files were read. */
  files: string;
  notes: string;
  state: TurnState;
  outcome: TurnOutcome | null;
  service_content: string | null;
  context_through_ts: string | null;
  service_message_id: string | null;
  run_id: string | null;
  settings: string | null;
  run_started_at: number | null;
  /**
   * How many reply posts were sent (`replyPostsAttempted`). The column began as a 0/1 flag for
   * the placeholder alone, and its 1 still means exactly that: one post sent.
   */
  reply_post_attempted: number;
  reply_ts: string | null;
  reply_parts: string;
  model_used: string | null;
  error: string | null;
  stop_requested_by: string | null;
  created_at: number;
}

/** The columns a transition writes (the rest are fixed when the turn is recorded). */
export const CHANGEABLE = [
  "state",
  "outcome",
  "notes",
  "service_content",
  "context_through_ts",
  "service_message_id",
  "run_id",
  "settings",
  "run_started_at",
  "reply_post_attempted",
  "reply_ts",
  "reply_parts",
  "model_used",
  "error",
] as const;

export type TurnChange = Record<(typeof CHANGEABLE)[number], unknown>;

export const toTurn = (r: TurnRow): Turn => ({
  id: r.id,
  conversationId: r.conversation_id,
  team: r.team,
  channel: r.channel,
  threadTs: r.thread_ts,
  messageTs: r.message_ts,
  user: r.user,
  authorTeam: r.author_team ?? r.team,
  content: r.content,
  files: JSON.parse(r.files) as SharedFile[],
  notes: JSON.parse(r.notes) as string[],
  state: r.state,
  outcome: r.outcome,
  serviceContent: r.service_content,
  contextThroughTs: r.context_through_ts,
  serviceMessageId: r.service_message_id,
  runId: r.run_id,
  settings: r.settings === null ? null : (JSON.parse(r.settings) as RunSettings),
  runStartedAt: r.run_started_at,
  replyPostsAttempted: r.reply_post_attempted,
  replyParts: JSON.parse(r.reply_parts) as string[],
  modelUsed: r.model_used,
  error: r.error,
  createdAt: r.created_at,
  stopRequestedBy: r.stop_requested_by ?? null,
});

/** Every column a transition may change, by column name. */
export const toChange = (t: Turn): TurnChange => ({
  state: t.state,
  outcome: t.outcome,
  notes: JSON.stringify(t.notes),
  service_content: t.serviceContent,
  context_through_ts: t.contextThroughTs,
  service_message_id: t.serviceMessageId,
  run_id: t.runId,
  settings: t.settings === null ? null : JSON.stringify(t.settings),
  run_started_at: t.runStartedAt,
  reply_post_attempted: t.replyPostsAttempted,
  reply_ts: t.replyParts[0] ?? null,
  reply_parts: JSON.stringify(t.replyParts),
  model_used: t.modelUsed,
  error: t.error,
});

/** The columns a new turn is recorded with (besides its state, `received`). */
export const NEW_COLUMNS = [
  "id",
  "conversation_id",
  "team",
  "channel",
  "thread_ts",
  "message_ts",
  "user",
  "author_team",
  "content",
  "files",
  "notes",
  "created_at",
] as const;

/** A new turn's columns, by column name. */
export const toNewRow = (t: Turn): Record<(typeof NEW_COLUMNS)[number], unknown> => ({
  id: t.id,
  conversation_id: t.conversationId,
  team: t.team,
  channel: t.channel,
  thread_ts: t.threadTs,
  message_ts: t.messageTs,
  user: t.user,
  author_team: t.authorTeam,
  content: t.content,
  files: JSON.stringify(t.files),
  notes: JSON.stringify(t.notes),
  created_at: t.createdAt,
});
