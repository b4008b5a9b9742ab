import type { Allowance, QueuePlace } from "../allowance.js";
import { type WindowRules, windowReadyAt } from "../window.js";
import { IN_HAND_MS, type TakeAnswer, TakesAhead } from "./ahead.js";
import type { BudgetDb } from "./budget-db.js";
import { LastReading } from "./earliest.js";
import { pause } from "./pauses.js";
import { NO_SLOTS, type SlotRows, type SlotTable } from "./slots.js";

/**
 * How long a slot taken ahead of its call counts while the call has not gone, ms: the call
 * comes within IN_HAND_MS of the take or the take is let go, and a call's slot then has this
 * much longer to be rewritten to count a window from the call (SlotTable.spend). A slot never
 * spent frees by itself then, whatever became of the replica that took it: a replica refused
 * meanwhile asks again when it frees, not a window later.
 */
export const AHEAD_MS = IN_HAND_MS + 2_000;

/**
 * A sliding window (budgets/window.ts) that replicas share: each take is a slot of
 * `budget_slots`, made one round trip ahead of the call (ahead.ts), as many at once as the
 * scheduler has calls ready (QueuePlace.ready). A slot counts AHEAD_MS until its call goes,
 * and one window from the call once it has. Taking is one statement under the key's lock
 * (SlotTable.occupy); readyAt computes with the same function as the in-memory window, from
 * the key's slots as last read, read again in the background when older than SEEN_MS
 * (earliest.ts).
 */
export class PostgresWindow implements Allowance {
  private readonly seen: LastReading<SlotRows>;
  private readonly takes: TakesAhead<number>;
  /** The slots taken ahead and not yet spent or let go, with until when each counts. */
  private readonly ahead = new Map<number, number>();

  constructor(
    private readonly budgets: BudgetDb,
    private readonly slots: SlotTable,
    private readonly key: string,
    private readonly rules: WindowRules,
    /** This replica's own copy of the budget, spent while the database does not answer. */
    private readonly alone: Allowance,
    changed: () => void = () => undefined,
  ) {
    // A take never spent (its calls went elsewhere, a pause) frees at once: no call went.
    this.takes = new TakesAhead(budgets, changed, (id) => {
      this.recount(id, undefined);
      this.slots.unspent(id);
    });
    this.seen = new LastReading(
      budgets,
      (now) => this.slots.read(this.key, now),
      NO_SLOTS,
      (rows, now) => this.takes.learnt(this.estimate(rows, now, 0)),
    );
  }

  readyAt(now: number, ahead = 0): number {
    if (this.takes.stalled(now)) return this.alone.readyAt(now, ahead);
    if (ahead === 0) {
      const known = this.takes.knownAt(now);
      if (known !== undefined) return known;
    }
    return this.estimate(this.seen.at(now), now, ahead);
  }

  tryTake(now: number, place?: QueuePlace): boolean {
    if (this.spend(now)) return true;
    if (this.takes.stalled(now)) return this.alone.tryTake(now);
    this.takes.ask(now, () => this.take(now, place?.ready ?? 1));
    return false;
  }

  async takeNow(now: number): Promise<boolean> {
    if (this.spend(now)) return true;
    if (this.takes.stalled(now)) return this.alone.tryTake(now);
    // The database taught when the next take can be: none before then, with no round trip.
    if (this.takes.notBefore(now) !== undefined) return false;
    const answer = await this.budgets.attempt(now, () => this.take(now, 1, true));
    // The database failed meanwhile: this replica's own copy decides.
    if (answer === undefined) return this.alone.tryTake(now);
    if (answer.taken.length === 0) this.takes.learnt(answer.nextAt);
    return answer.taken.length > 0;
  }

  ask(now: number, count = 1): void {
    this.takes.ask(now, () => this.take(now, count));
  }

  expect(now: number): void {
    this.takes.expect(now, (count) => this.take(now, count));
  }

  pauseUntil(until: number): void {
    this.seen.forget();
    this.takes.pause(until);
    pause(this.budgets, this.key, until);
  }

  /** Once what was asked of the database (a take, a reading) has landed. */
  async settled(): Promise<void> {
    await Promise.all([this.takes.settled(), this.seen.settled(), this.slots.settled()]);
  }

  /** A slot in hand spent at `now`: it counts a window from now. */
  private spend(now: number): boolean {
    const id = this.takes.spend(now);
    if (id === undefined) return false;
    const untilAt = now + this.rules.windowMs;
    this.recount(id, untilAt);
    this.slots.spend(id, untilAt);
    return true;
  }

  /**
   * The slot `id` taken ahead counts until `untilAt` now (undefined: no longer), in the reading
   * too. A reading made since without it (read after its rewrite) is left as it is.
   */
  private recount(id: number, untilAt: number | undefined): void {
    const was = this.ahead.get(id);
    this.ahead.delete(id);
    if (was === undefined) return;
    this.seen.apply((seen) => {
      const at = seen.freeAt.indexOf(was);
      if (at < 0) return seen;
      const freeAt = seen.freeAt.filter((_, i) => i !== at);
      if (untilAt !== undefined) freeAt.push(untilAt);
      return { ...seen, freeAt: freeAt.sort((a, b) => a - b) };
    });
  }

  /**
   * Up to `count` takes, and on a refusal the slots that say when the next may be. `spent`: for
   * a call that goes as soon as it lands, counting a window at once; else each counts AHEAD_MS
   * until its call goes.
   */
  private async take(now: number, count: number, spent = false): Promise<TakeAnswer<number>> {
    const { limit, windowMs } = this.rules;
    const untilAt = now + (spent ? windowMs : AHEAD_MS);
    const { taken, rows } = await this.slots.occupy(this.key, now, {
      limit,
      untilAt,
      held: false,
      count,
    });
    if (!rows) {
      if (!spent) for (const id of taken) this.ahead.set(id, untilAt);
      // Each slot taken counts until untilAt: the reading gets them, not read again.
      this.seen.apply((seen) => ({
        ...seen,
        freeAt: [...seen.freeAt, ...taken.map(() => untilAt)].sort((a, b) => a - b),
      }));
      return { taken, nextAt: now };
    }
    this.seen.set(now, rows);
    return { taken: [], nextAt: this.estimate(rows, now, 0) };
  }

  private estimate(rows: SlotRows, now: number, ahead: number): number {
    // A take made at t counts until t + windowMs.
    const takes = rows.freeAt
      .filter((until) => until > now)
      .map((until) => until - this.rules.windowMs);
    return Math.max(windowReadyAt(takes, now, ahead, this.rules), rows.pausedUntil);
  }
}
