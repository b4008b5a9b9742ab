import type { Immediate } from "../immediate.js";
import { type ConversationRow as Row, toConversation } from "../rows.js";
import type { Conversation, ConversationKey, ConversationStore } from "../stores.js";
import type { SyncPostgres } from "./sync-client.js";

const COLUMNS =
  "id, team, channel, thread_ts, assistant_id, service_thread_id, service_thread_owner, passed_through_ts";

/** The conversations in PostgreSQL. */
export class PostgresConversationStore implements Immediate<ConversationStore> {
  constructor(
    private readonly db: SyncPostgres,
    private readonly now: () => number = Date.now,
  ) {}

  find(key: ConversationKey): Conversation | undefined {
    return this.one(
      `SELECT ${COLUMNS} FROM conversations WHERE team = $1 AND channel = $2 AND thread_ts = $3`,
      [key.team, key.channel, key.threadTs],
    );
  }

  byId(id: number): Conversation | undefined {
    return this.one(`SELECT ${COLUMNS} FROM conversations WHERE id = $1`, [id]);
  }

  byServiceThread(serviceThreadId: string): Conversation | undefined {
    return this.one(`SELECT ${COLUMNS} FROM conversations WHERE service_thread_id = $1 LIMIT 1`, [
      serviceThreadId,
    ]);
  }

  ensure(key: ConversationKey, assistantId: string): Conversation {
    // Another replica may record the same thread at the same moment: the insert then does
    // nothing (once that replica has committed), and the next statement reads its row.
    const created = this.one(
      `INSERT INTO conversations (team, channel, thread_ts, assistant_id, created_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (team, channel, thread_ts) DO NOTHING
       RETURNING ${COLUMNS}`,
      [key.team, key.channel, key.threadTs, assistantId, this.now()],
    );
    return created ?? (this.find(key) as Conversation);
  }

  setServiceThread(id: number, serviceThreadId: string, owner: string | null) {
    const set = this.one(
      `UPDATE conversations SET service_thread_id = $1, service_thread_owner = $2
       WHERE id = $3 AND service_thread_id IS NULL RETURNING ${COLUMNS}`,
      [serviceThreadId, owner, id],
    );
    return set ?? this.byId(id);
  }

  setPassedThrough(id: number, ts: string): void {
    this.db.run("UPDATE conversations SET passed_through_ts = $1 WHERE id = $2", [ts, id]);
  }

  private one(sql: string, params: unknown[]): Conversation | undefined {
    const row = this.db.first<Row>(sql, params);
    return row && toConversation(row);
  }
}
