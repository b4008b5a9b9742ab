import type { Allowance } from "../allowance.js";
import { type WindowRules, windowReadyAt } from "../window.js";
import type { BudgetDb } from "./budget-db.js";
import { EarliestTake, fresh } from "./earliest.js";
import { pause } from "./pauses.js";
import type { SlotRows, SlotTable } from "./slots.js";

/**
 * A sliding window (budgets/window.ts) that replicas share: each take is a slot of
 * `budget_slots` that counts for one window. A take is one statement under the key's
 * lock (SlotTable.occupy); readyAt reads the key's slots and computes with the same function
 * as the in-memory window, and what it read is kept for SEEN_MS (earliest.ts).
 */
export class PostgresWindow implements Allowance {
  private seen: { now: number; rows: SlotRows } | undefined;
  private readonly earliest = new EarliestTake();

  constructor(
    private readonly budgets: BudgetDb,
    private readonly slots: SlotTable,
    private readonly key: string,
    private readonly rules: WindowRules,
  ) {}

  readyAt(now: number, ahead = 0): number {
    const known = ahead === 0 ? this.earliest.ahead(now) : undefined;
    if (known !== undefined) return known;
    const rows = this.read(now);
    if (!rows) return this.budgets.retryAt(now);
    // A take made at t counts until t + windowMs.
    const takes = rows.freeAt.map((until) => until - this.rules.windowMs);
    const ready = Math.max(windowReadyAt(takes, now, ahead, this.rules), rows.pausedUntil);
    return ahead === 0 ? this.earliest.learnt(ready) : ready;
  }

  tryTake(now: number): boolean {
    if (this.earliest.ahead(now) !== undefined) return false;
    this.seen = undefined;
    const { limit, windowMs } = this.rules;
    const slot = this.budgets.attempt(
      now,
      () => this.slots.occupy(this.key, now, { limit, untilAt: now + windowMs, held: false }),
      () => undefined,
    );
    if (slot !== undefined) return true;
    this.budgets.refused();
    this.readyAt(now);
    return false;
  }

  pauseUntil(until: number): void {
    this.seen = undefined;
    this.earliest.learnt(until);
    pause(this.budgets.db, this.key, until);
  }

  private read(now: number): SlotRows | undefined {
    if (this.seen !== undefined && fresh(this.seen.now, now)) return this.seen.rows;
    const rows = this.budgets.attempt(
      now,
      () => this.slots.read(this.key, now),
      () => undefined,
    );
    this.seen = rows && { now, rows };
    return rows;
  }
}
