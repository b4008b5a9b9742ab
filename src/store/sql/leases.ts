import { sql } from "kysely";
import type { Claim, LeaseStore } from "../stores.js";
import type { SqlDatabase } from "./dialect.js";

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
    // The row's holder before the claim is kept in the claim's own write: it tells a take-over
    // from a claim (metrics, the log) without a read before it.
    const taken = await this.sqlDb.db
      .insertInto("conversation_leases")
      .values({
        conversation_id: conversationId,
        holder,
        expires_at: now + ttlMs,
        taken_from: null,
      })
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
      )
      .returning("taken_from")
      .executeTakeFirst();
    if (!taken) return "refused";
    const from = taken.taken_from;
    return from !== null && from !== holder ? "taken_over" : "claimed";
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

  async release(conversationId: number, holder: string): Promise<void> {
    await this.sqlDb.db
      .deleteFrom("conversation_leases")
      .where("conversation_id", "=", conversationId)
      .where("holder", "=", holder)
      .execute();
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
