import { randomUUID } from "node:crypto";
import type { RunSettings } from "../service/schemas.js";
import type { Db } from "./db.js";

/**
 * A turn is one answered Slack message. It is written before any work starts and moves
 * through persisted states, each step idempotent from what is stored, so a restart
 * resumes every unfinished turn where it stopped:
 *   received → message_posted → run_started → finished
 */
export type TurnState = "received" | "message_posted" | "run_started" | "finished";
export type TurnOutcome = "completed" | "failed" | "stopped" | "error";

export interface Turn {
  id: string;
  conversationId: number;
  team: string;
  channel: string;
  threadTs: string;
  messageTs: string;
  user: string;
  /** The text posted to the service. */
  content: string;
  /** Short notes shown under the reply (e.g. files were not passed on). */
  notes: string[];
  state: TurnState;
  outcome: TurnOutcome | null;
  /** A message post was sent at least once: after a crash, look before posting again. */
  postAttempted: boolean;
  serviceMessageId: string | null;
  runId: string | null;
  /** The first reply message (the placeholder). */
  replyTs: string | null;
  /** Every reply message of this turn, in order (the first is replyTs). */
  replyParts: string[];
  settings: RunSettings | null;
  modelUsed: string | null;
  error: string | null;
  createdAt: number;
  /**
   * The text posted to the service: the question with the thread's unseen messages before
   * it. Null until composed; then fixed, so every retry posts the same text.
   */
  serviceContent: string | null;
  /** The Slack ts the composed text carries the thread up to; null when none was read. */
  contextThroughTs: string | null;
  /** When the run started, epoch ms; null before. */
  runStartedAt: number | null;
  /** The placeholder's post was sent (it may be in Slack even if its ts was not recorded). */
  replyPostAttempted: boolean;
}

export interface NewTurn {
  conversationId: number;
  team: string;
  channel: string;
  threadTs: string;
  messageTs: string;
  user: string;
  content: string;
  notes: string[];
}

interface Row {
  id: string;
  conversation_id: number;
  team: string;
  channel: string;
  thread_ts: string;
  message_ts: string;
  user: string;
  content: string;
  notes: string;
  state: TurnState;
  outcome: TurnOutcome | null;
  post_attempted: number;
  service_message_id: string | null;
  run_id: string | null;
  reply_ts: string | null;
  reply_parts: string;
  settings: string | null;
  model_used: string | null;
  error: string | null;
  created_at: number;
  service_content: string | null;
  context_through_ts: string | null;
  run_started_at: number | null;
  reply_post_attempted: number;
}

const toTurn = (r: Row): Turn => ({
  id: r.id,
  conversationId: r.conversation_id,
  team: r.team,
  channel: r.channel,
  threadTs: r.thread_ts,
  messageTs: r.message_ts,
  user: r.user,
  content: r.content,
  notes: JSON.parse(r.notes) as string[],
  state: r.state,
  outcome: r.outcome,
  postAttempted: r.post_attempted === 1,
  serviceMessageId: r.service_message_id,
  runId: r.run_id,
  replyTs: r.reply_ts,
  replyParts: JSON.parse(r.reply_parts) as string[],
  settings: r.settings === null ? null : (JSON.parse(r.settings) as RunSettings),
  modelUsed: r.model_used,
  error: r.error,
  createdAt: r.created_at,
  serviceContent: r.service_content,
  contextThroughTs: r.context_through_ts,
  runStartedAt: r.run_started_at,
  replyPostAttempted: r.reply_post_attempted === 1,
});

export class TurnStore {
  private readonly insertStmt;
  private readonly byIdStmt;
  private readonly byMessageStmt;
  private readonly unfinishedStmt;
  private readonly activeByUserStmt;
  private readonly countByUserStmt;
  private readonly messageIdsStmt;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.insertStmt = db.prepare(
      `INSERT INTO turns (id, conversation_id, team, channel, thread_ts, message_ts, user, content,
         notes, state, created_at, updated_at)
       VALUES (@id, @conversationId, @team, @channel, @threadTs, @messageTs, @user, @content,
         @notes, 'received', @now, @now)
       ON CONFLICT (team, channel, message_ts) DO NOTHING`,
    );
    this.byIdStmt = db.prepare<[string], Row>("SELECT * FROM turns WHERE id = ?");
    this.byMessageStmt = db.prepare<[string, string, string], Row>(
      "SELECT * FROM turns WHERE team = ? AND channel = ? AND message_ts = ?",
    );
    this.unfinishedStmt = db.prepare<[], Row>(
      "SELECT * FROM turns WHERE state <> 'finished' ORDER BY created_at, rowid",
    );
    this.messageIdsStmt = db.prepare<[number], { id: string }>(
      `SELECT service_message_id AS id FROM turns
       WHERE conversation_id = ? AND service_message_id IS NOT NULL`,
    );
    this.countByUserStmt = db.prepare<[string, string], { n: number }>(
      "SELECT COUNT(*) AS n FROM turns WHERE team = ? AND user = ? AND state <> 'finished'",
    );
    this.activeByUserStmt = db.prepare<[string, string, string], Row>(
      `SELECT * FROM turns WHERE team = ? AND channel = ? AND user = ? AND state <> 'finished'
       ORDER BY created_at, rowid`,
    );
  }

  /**
   * Records a new turn. Returns undefined when this Slack message already has one: the
   * same message delivered twice (app_mention + message, or a Slack retry) is answered once.
   */
  create(input: NewTurn): Turn | undefined {
    const id = randomUUID();
    const result = this.insertStmt.run({
      ...input,
      id,
      notes: JSON.stringify(input.notes),
      now: this.now(),
    });
    return result.changes === 1 ? this.byId(id) : undefined;
  }

  byId(id: string): Turn | undefined {
    const row = this.byIdStmt.get(id);
    return row && toTurn(row);
  }

  byMessage(team: string, channel: string, messageTs: string): Turn | undefined {
    const row = this.byMessageStmt.get(team, channel, messageTs);
    return row && toTurn(row);
  }

  unfinished(): Turn[] {
    return this.unfinishedStmt.all().map(toTurn);
  }

  /** A person's unfinished turns in one channel, oldest first. */
  activeFor(team: string, channel: string, user: string): Turn[] {
    return this.activeByUserStmt.all(team, channel, user).map(toTurn);
  }

  /** The service messages the turns of a conversation have posted (and recorded). */
  serviceMessageIds(conversationId: number): Set<string> {
    return new Set(this.messageIdsStmt.all(conversationId).map((r) => r.id));
  }

  /** How many turns of this person are unfinished, in every channel of the workspace. */
  unfinishedCountBy(team: string, user: string): number {
    return this.countByUserStmt.get(team, user)?.n ?? 0;
  }

  update(
    id: string,
    change: Partial<
      Pick<
        Turn,
        | "state"
        | "outcome"
        | "postAttempted"
        | "serviceMessageId"
        | "runId"
        | "replyTs"
        | "replyParts"
        | "settings"
        | "modelUsed"
        | "error"
        | "notes"
        | "serviceContent"
        | "contextThroughTs"
        | "runStartedAt"
        | "replyPostAttempted"
      >
    >,
  ): void {
    const columns: string[] = [];
    const values: Record<string, unknown> = { id, now: this.now() };
    const map: Record<string, [string, (v: unknown) => unknown]> = {
      state: ["state", (v) => v],
      outcome: ["outcome", (v) => v],
      postAttempted: ["post_attempted", (v) => (v ? 1 : 0)],
      serviceMessageId: ["service_message_id", (v) => v],
      runId: ["run_id", (v) => v],
      replyTs: ["reply_ts", (v) => v],
      replyParts: ["reply_parts", (v) => JSON.stringify(v)],
      settings: ["settings", (v) => (v === null ? null : JSON.stringify(v))],
      modelUsed: ["model_used", (v) => v],
      error: ["error", (v) => v],
      notes: ["notes", (v) => JSON.stringify(v)],
      serviceContent: ["service_content", (v) => v],
      contextThroughTs: ["context_through_ts", (v) => v],
      runStartedAt: ["run_started_at", (v) => v],
      replyPostAttempted: ["reply_post_attempted", (v) => (v ? 1 : 0)],
    };
    for (const [key, value] of Object.entries(change)) {
      const entry = map[key];
      if (!entry || value === undefined) continue;
      columns.push(`${entry[0]} = @${entry[0]}`);
      values[entry[0]] = entry[1](value);
    }
    if (columns.length === 0) return;
    this.db
      .prepare(`UPDATE turns SET ${columns.join(", ")}, updated_at = @now WHERE id = @id`)
      .run(values);
  }
}
