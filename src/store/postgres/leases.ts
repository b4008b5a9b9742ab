import type { Immediate } from "../immediate.js";
import type { Claim, LeaseStore } from "../stores.js";
import type { SyncPostgres } from "./sync-client.js";

/**
 * Conversation leases in PostgreSQL, shared by every replica on the database. A claim is one
 * conditional upsert: it takes the row only when the lease is free, expired, or already the
 * claimant's, so of two replicas claiming at once exactly one gets it, whatever the timing.
 * Unlike SQLite's, the leases are never cleared at open: other replicas hold live ones.
 */
export class PostgresLeaseStore implements Immediate<LeaseStore> {
  constructor(
    private readonly db: SyncPostgres,
    private readonly now: () => number = Date.now,
  ) {}

  claim(conversationId: number, holder: string, ttlMs: number): Claim {
    const now = this.now();
    // One statement, one round trip (a claim is on the path of every Slack acknowledgement).
    // The upsert decides on the row as committed when it runs, so of two claims at once one
    // wins; `previous` (the statement's snapshot) only tells a take-over from a claim.
    const row = this.db.first<{ taken: number; previous: string | null }>(
      `WITH previous AS (
         SELECT holder FROM conversation_leases WHERE conversation_id = $1
       ), taken AS (
         INSERT INTO conversation_leases AS lease (conversation_id, holder, expires_at)
         VALUES ($1, $2, $3)
         ON CONFLICT (conversation_id) DO UPDATE SET holder = excluded.holder,
           expires_at = excluded.expires_at
         WHERE lease.expires_at <= $4 OR lease.holder = excluded.holder
         RETURNING 1
       )
       SELECT (SELECT COUNT(*) FROM taken) AS taken, (SELECT holder FROM previous) AS previous`,
      [conversationId, holder, now + ttlMs, now],
    );
    if (!row || Number(row.taken) === 0) return "refused";
    return row.previous !== null && row.previous !== holder ? "taken_over" : "claimed";
  }

  renew(holder: string, ttlMs: number): number[] {
    return this.db
      .rows<{ id: number }>(
        `UPDATE conversation_leases SET expires_at = $1 WHERE holder = $2
         RETURNING conversation_id AS id`,
        [this.now() + ttlMs, holder],
      )
      .map((r) => r.id)
      .sort((a, b) => a - b);
  }

  release(conversationId: number, holder: string): void {
    this.db.run("DELETE FROM conversation_leases WHERE conversation_id = $1 AND holder = $2", [
      conversationId,
      holder,
    ]);
  }

  releaseAll(holder: string): number {
    return this.db.run("DELETE FROM conversation_leases WHERE holder = $1", [holder]);
  }

  unattended(limit: number): number[] {
    return this.db
      .rows<{ id: number }>(
        `SELECT t.conversation_id AS id FROM turns t
         LEFT JOIN conversation_leases l ON l.conversation_id = t.conversation_id
         WHERE t.state <> 'finished' AND (l.expires_at IS NULL OR l.expires_at <= $1)
         GROUP BY t.conversation_id ORDER BY MIN(t.created_at), MIN(t.seq) LIMIT $2`,
        [this.now(), limit],
      )
      .map((r) => r.id);
  }

  heldBy(holder: string): number {
    return (
      this.db.first<{ n: number }>(
        "SELECT COUNT(*) AS n FROM conversation_leases WHERE holder = $1 AND expires_at > $2",
        [holder, this.now()],
      )?.n ?? 0
    );
  }
}
