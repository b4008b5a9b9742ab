import type { Allowance } from "../../../rate/allowance.js";
import { FULL, type GcraRules, gcraAfterTake, gcraReadyAt } from "../../../rate/gcra.js";
import type { BudgetDb } from "./budget-db.js";
import { EarliestTake, fresh } from "./earliest.js";
import { PAUSED, PAUSED_UNTIL, pause } from "./pauses.js";

/** What the table says of one bucket at an instant. */
interface Seen {
  now: number;
  arrival: number;
  pausedUntil: number;
}

/**
 * A token bucket (rate/gcra.ts) that replicas share: its arrival time is one row of
 * `budget_buckets`, and its 429 pause one of `budget_pauses`.
 *
 * A take is one statement: an upsert whose update happens only when the bucket allows a take
 * at `now` and no pause holds, under the row's lock, so two replicas taking the last token at
 * once cannot both get it. readyAt reads the row and computes with the same functions as the
 * in-memory bucket; what it read is kept for SEEN_MS (earliest.ts), since the
 * scheduler asks every lane at one instant and the take decides anyway.
 */
export class PostgresBucket implements Allowance {
  private seen: Seen | undefined;
  private readonly earliest = new EarliestTake();

  constructor(
    private readonly budgets: BudgetDb,
    private readonly key: string,
    private readonly rules: GcraRules,
  ) {}

  readyAt(now: number, ahead = 0): number {
    const known = ahead === 0 ? this.earliest.ahead(now) : undefined;
    if (known !== undefined) return known;
    const seen = this.read(now);
    if (!seen) return this.budgets.retryAt(now);
    const ready = Math.max(gcraReadyAt(seen.arrival, now, ahead, this.rules), seen.pausedUntil);
    return ahead === 0 ? this.earliest.learnt(ready) : ready;
  }

  tryTake(now: number): boolean {
    if (this.earliest.ahead(now) !== undefined) return false;
    this.seen = undefined;
    const arrival = this.budgets.attempt(
      now,
      () => this.take(now),
      () => undefined,
    );
    if (arrival === undefined) {
      this.budgets.refused();
      this.readyAt(now);
      return false;
    }
    // Taken: no pause holds at `now`.
    this.seen = { now, arrival, pausedUntil: Number.NEGATIVE_INFINITY };
    return true;
  }

  pauseUntil(until: number): void {
    this.seen = undefined;
    this.earliest.learnt(until);
    this.budgets.tell(() => pause(this.budgets.db, this.key, until));
  }

  /**
   * The arrival time after the take, or undefined when refused. The condition is
   * gcraReadyAt(arrival, now, 0) <= now, which is ceil(max(arrival, now) - tolerance) <= now;
   * the new arrival is gcraAfterTake's. A missing row is a full bucket.
   */
  private take(now: number): number | undefined {
    const row = this.budgets.db.first<{ arrival: number }>(
      `INSERT INTO budget_buckets AS b (key, arrival)
       SELECT $1, $3::float8 WHERE NOT ${PAUSED}
       ON CONFLICT (key) DO UPDATE SET arrival = GREATEST(b.arrival, $2::float8) + $4::float8
         WHERE ceil(GREATEST(b.arrival, $2::float8) - $5::float8) <= $2::float8
       RETURNING arrival`,
      [
        this.key,
        now,
        gcraAfterTake(FULL, now, this.rules),
        this.rules.spacingMs,
        this.rules.toleranceMs,
      ],
    );
    return row?.arrival;
  }

  private read(now: number): Seen | undefined {
    if (this.seen !== undefined && fresh(this.seen.now, now)) return this.seen;
    this.seen = this.budgets.attempt(
      now,
      () => {
        const row = this.budgets.db.first<{ arrival: number | null; paused_until: number }>(
          `SELECT (SELECT arrival FROM budget_buckets WHERE key = $1) AS arrival,
                  ${PAUSED_UNTIL} AS paused_until`,
          [this.key],
        );
        return { now, arrival: row?.arrival ?? FULL, pausedUntil: row?.paused_until ?? FULL };
      },
      () => undefined,
    );
    return this.seen;
  }
}
