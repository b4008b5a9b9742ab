import type { SyncPostgres } from "../sync-client.js";
import { PAUSED, PAUSED_UNTIL } from "./pauses.js";

/** The advisory lock class of a key's slots (its second key is the key's hash): "budg". */
const SLOTS_LOCK = 0x6275_6467;

/** Slots freed this long ago are deleted by the next take of their key, ms (clock skew, see BudgetDb). */
const PRUNE_AFTER_MS = 60_000;

/** A key's slots as they stand at an instant. */
export interface SlotRows {
  /** Until when each released slot counts, ascending, all after the instant. */
  freeAt: number[];
  /** The ids of the slots held (taken, not yet released), by any replica. */
  held: number[];
  pausedUntil: number;
}

/**
 * The `budget_slots` table: per key, the slots that count at an instant, each until
 * `until_at`. A sliding window's take is a slot counting for a window; a service request's
 * slot is held until its release, and counts a hold after that (service-slots.ts).
 */
export class SlotTable {
  constructor(private readonly db: SyncPostgres) {}

  /**
   * Takes a slot of `key` counting until `untilAt` when fewer than `limit` count at `now` and
   * no pause holds: its id, or undefined. One short transaction under the key's advisory lock:
   * the count is read after the lock is held, so it sees every slot taken before (a count in
   * the same statement as the lock would read the rows as they were before the wait).
   */
  occupy(
    key: string,
    now: number,
    slot: { limit: number; untilAt: number; held: boolean },
  ): number | undefined {
    return this.db.transaction(() => {
      this.db.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [SLOTS_LOCK, key]);
      const row = this.db.first<{ id: number }>(
        `WITH pruned AS (DELETE FROM budget_slots WHERE key = $1 AND until_at <= $2::float8 - $6)
         INSERT INTO budget_slots (key, until_at, held)
         SELECT $1, $4, $5
         WHERE (SELECT count(*) FROM budget_slots WHERE key = $1 AND until_at > $2::float8) < $3
           AND NOT ${PAUSED}
         RETURNING id`,
        [key, now, slot.limit, slot.untilAt, slot.held, PRUNE_AFTER_MS],
      );
      return row?.id;
    });
  }

  /** The held slot `id` was released: it counts until `untilAt`, then frees. */
  release(id: number, untilAt: number): void {
    this.db.run("UPDATE budget_slots SET until_at = $2, held = FALSE WHERE id = $1 AND held", [
      id,
      untilAt,
    ]);
  }

  read(key: string, now: number): SlotRows {
    const row = this.db.first<{ free_at: number[]; held: number[]; paused_until: number }>(
      `SELECT ARRAY(SELECT until_at FROM budget_slots
                    WHERE key = $1 AND until_at > $2 AND NOT held ORDER BY until_at) AS free_at,
              ARRAY(SELECT id::float8 FROM budget_slots
                    WHERE key = $1 AND until_at > $2 AND held ORDER BY id) AS held,
              ${PAUSED_UNTIL} AS paused_until`,
      [key, now],
    );
    return {
      freeAt: row?.free_at ?? [],
      held: row?.held ?? [],
      pausedUntil: row?.paused_until ?? Number.NEGATIVE_INFINITY,
    };
  }
}
