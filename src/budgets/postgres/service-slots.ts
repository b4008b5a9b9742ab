import type { SlotRules, SlotView, SlotWindow } from "../service/slot-window.js";
import type { BudgetDb } from "./budget-db.js";
import { pause } from "./pauses.js";
import type { SlotRows, SlotTable } from "./slots.js";

export interface SharedSlotOptions {
  /**
   * How long a held slot counts at most, beyond its hold, ms; default 300_000. A replica that
   * dies holding slots never releases them: they free this long after they were taken. Longer
   * than any request waits for its answer (the client's header and body timeouts, 30 s each).
   */
  leaseMs?: number;
  /**
   * While tickets wait for slots that other replicas hold, the lane looks again this often,
   * ms; default 1_000 (a release elsewhere is not told to this process).
   */
  lookAgainMs?: number;
}

/**
 * The service budget's slots of one (token, kind) in `budget_slots`, shared by replicas: a
 * slot is held from its ticket's ready until its release, then counts one hold more (as in
 * memory, slot-window.ts). Taking one is one statement under the key's lock; a
 * release is one UPDATE. What was read is kept for the rest of the same millisecond, since the
 * lane estimates every waiting ticket at one instant.
 */
export class PostgresSlotWindow implements SlotWindow {
  /** The slots this process holds, to tell them from those held elsewhere. */
  private readonly mine = new Set<number>();
  private seen: { now: number; rows: SlotRows } | undefined;
  private readonly leaseMs: number;
  private readonly lookAgainMs: number;

  constructor(
    private readonly budgets: BudgetDb,
    private readonly slots: SlotTable,
    private readonly key: string,
    private readonly rules: SlotRules,
    options: SharedSlotOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 300_000;
    this.lookAgainMs = options.lookAgainMs ?? 1_000;
  }

  occupy(now: number): number | undefined {
    this.seen = undefined;
    const untilAt = now + this.leaseMs + this.rules.holdMs;
    const id = this.budgets.attempt(
      now,
      () => this.slots.occupy(this.key, now, { limit: this.rules.limit, untilAt, held: true }),
      () => undefined,
    );
    if (id !== undefined) this.mine.add(id);
    return id;
  }

  release(id: number, now: number): void {
    if (!this.mine.delete(id)) return;
    this.seen = undefined;
    // Posted, not waited for; lost (an outage), the slot counts until its lease ends.
    this.slots.release(id, now + this.rules.holdMs);
  }

  pauseUntil(until: number): void {
    this.seen = undefined;
    pause(this.budgets.db, this.key, until);
  }

  view(now: number): SlotView {
    const rows = this.read(now);
    if (!rows) {
      // The database is out of reach: nothing is taken until it answers again.
      const retryAt = this.budgets.retryAt(now);
      return { held: 0, freeAt: [], pausedUntil: retryAt, lookAgainAt: retryAt };
    }
    const elsewhere = rows.held.some((id) => !this.mine.has(id));
    return {
      held: rows.held.length,
      freeAt: rows.freeAt,
      pausedUntil: rows.pausedUntil,
      lookAgainAt: elsewhere ? now + this.lookAgainMs : Number.POSITIVE_INFINITY,
    };
  }

  private read(now: number): SlotRows | undefined {
    if (this.seen?.now === now) return this.seen.rows;
    const rows = this.budgets.attempt(
      now,
      () => this.slots.read(this.key, now),
      () => undefined,
    );
    this.seen = rows && { now, rows };
    return rows;
  }
}
