import { type QueryCreator, sql } from "kysely";
import { type ConversationRow, toConversation } from "../rows.js";
import type { Claim, ClaimRead, LeaseStore } from "../stores.js";
import type { Turn } from "../turn.js";
import { type TurnRow, toTurn } from "../turn-rows.js";
import { conversationByIdQuery } from "./conversations.js";
import type { SqlDatabase } from "./dialect.js";
import type { Schema } from "./schema.js";
import { unfinishedInQuery } from "./turns.js";

/**
 * Conversation leases in SQL, shared by every replica on a PostgreSQL database. A claim is one
 * conditional upsert: it takes the row only when the lease is free, expired, or already the
 * claimant's, so of two replicas claiming at once exactly one gets it, whatever the timing.
 */
export class SqlLeaseStore implements LeaseStore {
  constructor(
    private readonly sqlDb: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(conversationId: number, holder: string, ttlMs: number): Promise<Claim> {
    const now = this.now();
    const taken = await this.upsert(this.sqlDb.db, conversationId, holder, now + ttlMs, now)
      .returning("taken_from")
      .executeTakeFirst();
    return claimOf(taken, holder);
  }

  async claimReading(conversationId: number, holder: string, ttlMs: number): Promise<ClaimRead> {
    const { db } = this.sqlDb;
    const conversation = conversationByIdQuery(db, conversationId);
    const unfinished = unfinishedInQuery(this.sqlDb, conversationId);
    if (!this.sqlDb.writesInWith) {
      const claim = await this.claim(conversationId, holder, ttlMs);
      if (claim === "refused") return REFUSED;
      const [row, rows] = await Promise.all([
        conversation.executeTakeFirst(),
        unfinished.execute(),
      ]);
      return { claim, conversation: row && toConversation(row), unfinished: rows.map(toTurn) };
    }
    const now = this.now();
    // The reads, as JSON beside the claim's row: a row for the conversation, and the turns
    // in the order they arrived (json_agg keeps no order of its own).
    const claimed = sql<boolean>`EXISTS (SELECT 1 FROM lease)`;
    const arrival = sql.ref(`u.${this.sqlDb.arrival}`);
    const row = await db
      .with("lease", (q) =>
        this.upsert(q, conversationId, holder, now + ttlMs, now).returning("taken_from"),
      )
      .selectNoFrom([
        claimed.as("claimed"),
        sql<string | null>`(SELECT taken_from FROM lease)`.as("taken_from"),
        sql<ConversationRow | null>`(SELECT row_to_json(c) FROM (${conversation}) AS c)`.as(
          "conversation",
        ),
        sql<TurnRow[] | null>`(SELECT json_agg(u ORDER BY u.created_at, ${arrival})
          FROM (${unfinished}) AS u WHERE ${claimed})`.as("unfinished"),
      ])
      .executeTakeFirstOrThrow();
    const claim = claimOf(row.claimed ? row : undefined, holder);
    if (claim === "refused") return REFUSED;
    return {
      claim,
      conversation: row.conversation ? toConversation(row.conversation) : undefined,
      unfinished: (row.unfinished ?? []).map(toTurn),
    };
  }

  /**
   * The claim's conditional upsert: it takes the row only when the lease is free, expired or
   * already `holder`'s. The row's holder before the claim is kept in the claim's own write: it
   * tells a take-over from a claim (metrics, the log) without a read before it.
   */
  private upsert(
    db: QueryCreator<Schema>,
    conversationId: number,
    holder: string,
    expiresAt: number,
    now: number,
  ) {
    return db
      .insertInto("conversation_leases")
      .values({ conversation_id: conversationId, holder, expires_at: expiresAt, taken_from: null })
      .onConflict((conflict) =>
        conflict
          .column("conversation_id")
          .doUpdateSet((eb) => ({
            holder: eb.ref("excluded.holder"),
            expires_at: eb.ref("excluded.expires_at"),
            taken_from: eb.ref("conversation_leases.holder"),
          }))
          .where((eb) =>
            eb.or([
              eb("conversation_leases.expires_at", "<=", now),
              eb("conversation_leases.holder", "=", eb.ref("excluded.holder")),
            ]),
          ),
      );
  }

  async renew(holder: string, ttlMs: number): Promise<number[]> {
    const rows = await this.sqlDb.db
      .updateTable("conversation_leases")
      .set({ expires_at: this.now() + ttlMs })
      .where("holder", "=", holder)
      .returning("conversation_id")
      .execute();
    return rows.map((r) => r.conversation_id).sort((a, b) => a - b);
  }

  async releaseIfDone(conversationId: number, holder: string): Promise<Turn[]> {
    const unfinished = unfinishedInQuery(this.sqlDb, conversationId);
    const released = await this.sqlDb.db
      .deleteFrom("conversation_leases")
      .where("conversation_id", "=", conversationId)
      .where("holder", "=", holder)
      .where(({ not, exists }) => not(exists(unfinished)))
      .executeTakeFirst();
    if (Number(released.numDeletedRows) > 0) return [];
    return (await unfinished.execute()).map(toTurn);
  }

  async releaseAll(holder: string): Promise<number> {
    const result = await this.sqlDb.db
      .deleteFrom("conversation_leases")
      .where("holder", "=", holder)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async unattended(limit: number): Promise<number[]> {
    const arrival = sql.ref(`t.${this.sqlDb.arrival}`);
    const rows = await this.sqlDb.db
      .selectFrom("turns as t")
      .leftJoin("conversation_leases as l", "l.conversation_id", "t.conversation_id")
      .select("t.conversation_id as id")
      .where("t.state", "<>", "finished")
      .where((eb) => eb.or([eb("l.expires_at", "is", null), eb("l.expires_at", "<=", this.now())]))
      .groupBy("t.conversation_id")
      .orderBy((eb) => eb.fn.min("t.created_at"))
      .orderBy(sql`min(${arrival})`)
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  async heldBy(holder: string): Promise<number> {
    const row = await this.sqlDb.db
      .selectFrom("conversation_leases")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("holder", "=", holder)
      .where("expires_at", ">", this.now())
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}

const REFUSED: ClaimRead = { claim: "refused", conversation: undefined, unfinished: [] };

/** The claim the upsert's row says: none written is a refusal. */
function claimOf(taken: { taken_from: string | null } | undefined, holder: string): Claim {
  if (!taken) return "refused";
  const from = taken.taken_from;
  return from !== null && from !== holder ? "taken_over" : "claimed";
}
