import type { BudgetDb } from "./budget-db.js";

/**
 * The earliest instant a shared budget may allow its next take, as this replica last learnt it
 * from the database. Other replicas' takes and 429 pauses only ever move that instant later,
 * so until it comes the database need not be asked: the scheduler wakes on every new piece of
 * every answer, and a budget it finds spent is answered here, without a round trip.
 */
export class EarliestTake {
  private at = Number.NEGATIVE_INFINITY;

  /** The instant learnt, while it is still ahead of `now`; undefined: ask the database. */
  ahead(now: number): number | undefined {
    return now < this.at ? this.at : undefined;
  }

  /** Keeps `at` when it is later than what was known; returns it. */
  learnt(at: number): number {
    this.at = Math.max(this.at, at);
    return at;
  }
}

/**
 * How long what a budget read from the database answers its readyAt, ms. An answer that says
 * "ready" may be stale by then (another replica took the token): the take itself is decided by
 * the database, and a refused one reads again. The scheduler asks on every wake (every new
 * piece of every answer); a read per budget per SEEN_MS bounds what that costs.
 */
const SEEN_MS = 25;

/** Whether a reading made at `readAt` still answers at `now`. */
export function fresh(readAt: number, now: number): boolean {
  return now >= readAt && now - readAt < SEEN_MS;
}

/**
 * What a shared budget last read of its rows: answered for SEEN_MS, then read again in the
 * background (the caller gets the older reading meanwhile: the take decides anyway).
 */
export class LastReading<T> {
  private seen: { now: number; value: T } | undefined;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly budgets: BudgetDb,
    private readonly read: (now: number) => Promise<T>,
    /** What is answered before anything was read. */
    private readonly empty: T,
    /** A reading landed (what it teaches of the earliest next take, say). */
    private readonly landed: (value: T, now: number) => void = () => undefined,
  ) {}

  /** The last reading, or `empty`; asked again in the background when older than SEEN_MS. */
  at(now: number): T {
    const seen = this.seen;
    if (seen && fresh(seen.now, now)) return seen.value;
    if (!this.reading && !this.budgets.down(now)) {
      this.reading = this.budgets
        .attempt(now, () => this.read(now))
        .then((value) => {
          this.reading = undefined;
          if (value === undefined) return;
          this.seen = { now, value };
          this.landed(value, now);
        });
    }
    return seen?.value ?? this.empty;
  }

  /** What a statement read at `now` (a take's answer). */
  set(now: number, value: T): void {
    this.seen = { now, value };
  }

  /** What was read no longer holds (a pause): the next look reads again. */
  forget(): void {
    this.seen = undefined;
  }

  /**
   * This process changed the rows in a way it knows (its own take or release): the reading is
   * kept, changed as the rows were, rather than read again. A reading on its way may still land
   * without the change; the take decides anyway.
   */
  apply(change: (value: T) => T): void {
    if (this.seen) this.seen = { now: this.seen.now, value: change(this.seen.value) };
  }

  /** Once the reading on its way (if any) has landed. */
  async settled(): Promise<void> {
    await this.reading;
  }
}
