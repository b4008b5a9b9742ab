import type { Immediate } from "../immediate.js";
import { type ConversationRow as Row, toConversation } from "../rows.js";
import type { Conversation, ConversationKey, ConversationStore } from "../stores.js";
import type { Db } from "./db.js";

/** The conversations in SQLite. */
export class SqliteConversationStore implements Immediate<ConversationStore> {
  private readonly findStmt;
  private readonly insertStmt;
  private readonly byIdStmt;
  private readonly byServiceThreadStmt;
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
    this.byServiceThreadStmt = db.prepare<[string], Row>(
      "SELECT * FROM conversations WHERE service_thread_id = ? LIMIT 1",
    );
    this.insertStmt = db.prepare(
      `INSERT INTO conversations (team, channel, thread_ts, assistant_id, created_at)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT (team, channel, thread_ts) DO NOTHING`,
    );
    this.setThreadStmt = db.prepare(
      `UPDATE conversations SET service_thread_id = ?, service_thread_owner = ?
       WHERE id = ? AND service_thread_id IS NULL`,
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

  byServiceThread(serviceThreadId: string): Conversation | undefined {
    const row = this.byServiceThreadStmt.get(serviceThreadId);
    return row && toConversation(row);
  }

  ensure(key: ConversationKey, assistantId: string): Conversation {
    this.insertStmt.run(key.team, key.channel, key.threadTs, assistantId, this.now());
    return this.find(key) as Conversation;
  }

  setServiceThread(id: number, serviceThreadId: string, owner: string | null) {
    this.setThreadStmt.run(serviceThreadId, owner, id);
    return this.byId(id);
  }

  setPassedThrough(id: number, ts: string): void {
    this.passThroughStmt.run(ts, id);
  }
}
