import type { Db } from "./db.js";

/** One Slack thread mapped to one service thread. */
export interface Conversation {
  id: number;
  team: string;
  channel: string;
  threadTs: string;
  assistantId: string;
  serviceThreadId: string | null;
  /** The latest Slack ts of the thread passed on to the service; null: nothing yet. */
  passedThroughTs: string | null;
}

export interface ConversationKey {
  team: string;
  channel: string;
  threadTs: string;
}

interface Row {
  id: number;
  team: string;
  channel: string;
  thread_ts: string;
  assistant_id: string;
  service_thread_id: string | null;
  passed_through_ts: string | null;
}

const toConversation = (r: Row): Conversation => ({
  id: r.id,
  team: r.team,
  channel: r.channel,
  threadTs: r.thread_ts,
  assistantId: r.assistant_id,
  serviceThreadId: r.service_thread_id,
  passedThroughTs: r.passed_through_ts,
});

export class ConversationStore {
  private readonly findStmt;
  private readonly insertStmt;
  private readonly byIdStmt;
  private readonly setThreadStmt;
  private readonly passThroughStmt;

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.findStmt = db.prepare<[string, string, string], Row>(
      "SELECT * FROM conversations WHERE team = ? AND channel = ? AND thread_ts = ?",
    );
    this.byIdStmt = db.prepare<[number], Row>("SELECT * FROM conversations WHERE id = ?");
    this.insertStmt = db.prepare(
      `INSERT INTO conversations (team, channel, thread_ts, assistant_id, created_at)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT (team, channel, thread_ts) DO NOTHING`,
    );
    this.setThreadStmt = db.prepare(
      "UPDATE conversations SET service_thread_id = ? WHERE id = ? AND service_thread_id IS NULL",
    );
    this.passThroughStmt = db.prepare(
      "UPDATE conversations SET passed_through_ts = ? WHERE id = ?",
    );
  }

  find(key: ConversationKey): Conversation | undefined {
    const row = this.findStmt.get(key.team, key.channel, key.threadTs);
    return row && toConversation(row);
  }

  byId(id: number): Conversation | undefined {
    const row = this.byIdStmt.get(id);
    return row && toConversation(row);
  }

  /** Returns the conversation of this thread, creating it with `assistantId` if new. */
  ensure(key: ConversationKey, assistantId: string): Conversation {
    this.insertStmt.run(key.team, key.channel, key.threadTs, assistantId, this.now());
    return this.find(key) as Conversation;
  }

  setServiceThread(id: number, serviceThreadId: string): void {
    this.setThreadStmt.run(serviceThreadId, id);
  }

  /**
   * Records that the thread was passed on up to `ts`. The caller keeps it moving forward
   * only (turns of one conversation run one at a time, so there is no race).
   */
  setPassedThrough(id: number, ts: string): void {
    this.passThroughStmt.run(ts, id);
  }
}
