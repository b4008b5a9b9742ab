import type { Immediate } from "../immediate.js";
import type { Claim, LeaseStore } from "../stores.js";
import type { Db } from "./db.js";

/**
 * Conversation leases in SQLite. The file is held by one process (db.ts), so a lease never
 * has a rival holder here; the table keeps the core's one way of running turns, and a lease
 * left by a process that died is cleared when the file is opened again (`clearLeases`).
 */
export class SqliteLeaseStore implements Immediate<LeaseStore> {
  private readonly getStmt;
  private readonly upsertStmt;
  private readonly renewStmt;
  private readonly heldStmt;
  private readonly releaseStmt;
  private readonly releaseAllStmt;
  private readonly unattendedStmt;
  private readonly countStmt;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.getStmt = db.prepare<[number], { holder: string; expires_at: number }>(
      "SELECT holder, expires_at FROM conversation_leases WHERE conversation_id = ?",
    );
    this.upsertStmt = db.prepare(
      `INSERT INTO conversation_leases (conversation_id, holder, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (conversation_id) DO UPDATE SET holder = excluded.holder,
         expires_at = excluded.expires_at`,
    );
    this.renewStmt = db.prepare("UPDATE conversation_leases SET expires_at = ? WHERE holder = ?");
    this.heldStmt = db.prepare<[string], { id: number }>(
      "SELECT conversation_id AS id FROM conversation_leases WHERE holder = ? ORDER BY conversation_id",
    );
    this.releaseStmt = db.prepare(
      "DELETE FROM conversation_leases WHERE conversation_id = ? AND holder = ?",
    );
    this.releaseAllStmt = db.prepare("DELETE FROM conversation_leases WHERE holder = ?");
    this.unattendedStmt = db.prepare<[number, number], { id: number }>(
      `SELECT t.conversation_id AS id FROM turns t
       LEFT JOIN conversation_leases l ON l.conversation_id = t.conversation_id
       WHERE t.state <> 'finished' AND (l.expires_at IS NULL OR l.expires_at <= ?)
       GROUP BY t.conversation_id ORDER BY MIN(t.created_at) LIMIT ?`,
    );
    this.countStmt = db.prepare<[string, number], { n: number }>(
      "SELECT COUNT(*) AS n FROM conversation_leases WHERE holder = ? AND expires_at > ?",
    );
  }

  claim(conversationId: number, holder: string, ttlMs: number): Claim {
    return this.db.transaction((): Claim => {
      const now = this.now();
      const current = this.getStmt.get(conversationId);
      const live = current !== undefined && current.expires_at > now;
      if (live && current.holder !== holder) return "refused";
      this.upsertStmt.run(conversationId, holder, now + ttlMs);
      return current !== undefined && !live && current.holder !== holder ? "taken_over" : "claimed";
    })();
  }

  renew(holder: string, ttlMs: number): number[] {
    this.renewStmt.run(this.now() + ttlMs, holder);
    return this.heldStmt.all(holder).map((r) => r.id);
  }

  release(conversationId: number, holder: string): void {
    this.releaseStmt.run(conversationId, holder);
  }

  releaseAll(holder: string): number {
    return this.releaseAllStmt.run(holder).changes;
  }

  unattended(limit: number): number[] {
    return this.unattendedStmt.all(this.now(), limit).map((r) => r.id);
  }

  heldBy(holder: string): number {
    return this.countStmt.get(holder, this.now())?.n ?? 0;
  }
}

/** Forgets every lease: at open, when the exclusive lock proves no other process holds one. */
export function clearLeases(db: Db): void {
  db.exec("DELETE FROM conversation_leases");
}
