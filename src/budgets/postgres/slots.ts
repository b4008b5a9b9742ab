import type { BudgetDb } from "./budget-db.js";
import { PAUSED_UNTIL } from "./pauses.js";

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

/** A key of which nothing was read yet. */
export const NO_SLOTS: SlotRows = { freeAt: [], held: [], pausedUntil: Number.NEGATIVE_INFINITY };

/**
 * The `budget_slots` table: per key, the slots that count at an instant, each until
 * `until_at`. A sliding window's take is a slot counting for a window; a service request's
 * slot is held until its release, and counts a hold after that (service-slots.ts).
 */
export class SlotTable {
  constructor(private readonly db: BudgetDb) {}

  /**
   * Takes a slot of `key` counting until `untilAt` when fewer than `limit` count at `now` and
   * no pause holds: its id, or undefined. One round trip: `budget_occupy` (migration 5) takes
   * the key's advisory lock for the rest of this statement, prunes slots long freed, counts
   * those that still count and inserts one if there is room and no pause holds. Each of its
   * statements reads the rows as they are when it runs (a volatile function's do), so the
   * count sees every slot taken before the lock was had; a count in the locking statement
   * itself would read them as they were before the wait.
   */
  async occupy(
    key: string,
    now: number,
    slot: { limit: number; untilAt: number; held: boolean },
  ): Promise<number | undefined> {
    const row = await this.db.first<{ id: number | null }>(
      "SELECT budget_occupy($1, $2, $3, $4, $5, $6) AS id",
      [key, now, slot.limit, slot.untilAt, slot.held, PRUNE_AFTER_MS],
    );
    return row?.id ?? undefined;
  }

  /** The held slot `id` was released: it counts until `untilAt`, then frees (not waited for). */
  release(id: number, untilAt: number): void {
    this.db.post("UPDATE budget_slots SET until_at = $2, held = FALSE WHERE id = $1 AND held", [
      id,
      untilAt,
    ]);
  }

  async read(key: string, now: number): Promise<SlotRows> {
    const row = await this.db.first<{ free_at: number[]; held: number[]; paused_until: number }>(
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
