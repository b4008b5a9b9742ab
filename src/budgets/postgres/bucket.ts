import type { Allowance, QueuePlace } from "../allowance.js";
import { EPSILON, FULL, type GcraRules, gcraReadyAt, gcraTakeable } from "../gcra.js";
import { type TakeAnswer, TakesAhead } from "./ahead.js";
import type { BudgetDb } from "./budget-db.js";
import { LastReading } from "./earliest.js";
import { PAUSED, PAUSED_UNTIL, pause } from "./pauses.js";
import { firstInLine, queueUp, waiterParams, withdrawWaiter } from "./waiters.js";

/** What the table says of one bucket at an instant. */
interface Seen {
  arrival: number;
  pausedUntil: number;
}

const UNREAD: Seen = { arrival: FULL, pausedUntil: Number.NEGATIVE_INFINITY };

/** What a take's statement answers. */
interface TakeRow {
  /** The arrival time after the take; null: refused. */
  taken: number | null;
  /** How many tokens the take took; null: refused. */
  took: number | null;
  /** The arrival time as the take found it; null: the bucket is full. */
  arrival: number | null;
  paused_until: number;
  /** Another replica's call ranks before this one (waiters.ts). */
  behind: boolean;
}

/**
 * SQL: how many of $6 takes the bucket row `b` allows at $2 (gcraTakeable, with spacing $4 and
 * tolerance $5), when it allows one. Every use in one statement reads the row before the take.
 */
const TAKEABLE = `LEAST($6::int, GREATEST(1, floor((floor($2::float8) - GREATEST(b.arrival, $2::float8)
  + $5::float8) / $4::float8 + ${EPSILON}::float8) + 1))::int`;

/**
 * A replica that stopped asking for a bucket holds the others back for at most two tokens'
 * spacing and this long more, ms (waiters.ts: `live_until`).
 */
const WAITER_GRACE_MS = 1_000;

/**
 * A token bucket (budgets/gcra.ts) that replicas share: its arrival time is one row of
 * `budget_buckets`, its 429 pause one of `budget_pauses`, and who waits for it rows of
 * `budget_waiters`. Takes are made one round trip ahead of the call (ahead.ts).
 *
 * A take is one statement: an upsert whose update happens only when the bucket allows a take
 * at `now`, no pause holds and no other replica's call waits with a lower rank, under the
 * row's lock, so two replicas taking the last token at once cannot both get it. The same
 * statement answers what a refused take needs to know of when to try again, and keeps this
 * replica's place among the waiters. readyAt computes with the same functions as the
 * in-memory bucket, from what the last statement read; a reading older than SEEN_MS
 * (earliest.ts) is read again in the background.
 */
export class PostgresBucket implements Allowance {
  private readonly seen: LastReading<Seen>;
  private readonly takes: TakesAhead<true>;
  /** This replica's row in `budget_waiters` ranks a call (it may hold others back). */
  private waiting = false;

  constructor(
    private readonly budgets: BudgetDb,
    private readonly key: string,
    private readonly rules: GcraRules,
    /** This replica's own copy of the budget, spent while the database does not answer. */
    private readonly alone: Allowance,
    changed: () => void = () => undefined,
  ) {
    this.takes = new TakesAhead(budgets, changed);
    this.seen = new LastReading(
      budgets,
      () => this.read(),
      UNREAD,
      (seen, now) =>
        this.takes.learnt(
          Math.max(gcraReadyAt(seen.arrival, now, 0, this.rules), seen.pausedUntil),
        ),
    );
  }

  readyAt(now: number, ahead = 0): number {
    if (this.takes.stalled(now)) return this.alone.readyAt(now, ahead);
    if (ahead === 0) {
      const known = this.takes.knownAt(now);
      if (known !== undefined) return known;
    }
    const seen = this.seen.at(now);
    return Math.max(gcraReadyAt(seen.arrival, now, ahead, this.rules), seen.pausedUntil);
  }

  tryTake(now: number, place?: QueuePlace): boolean {
    if (this.takes.spend(now)) {
      this.waiting = place !== undefined && place.next < Infinity;
      return true;
    }
    if (this.takes.stalled(now)) return this.alone.tryTake(now);
    this.takes.ask(now, () => this.take(now, place, place?.ready ?? 1));
    return false;
  }

  ask(now: number, count = 1): void {
    this.takes.ask(now, () => this.take(now, undefined, count));
  }

  expect(now: number): void {
    this.takes.expect(now, (count) => this.take(now, undefined, count));
  }

  withdraw(): void {
    if (!this.waiting) return;
    this.waiting = false;
    withdrawWaiter(this.budgets, this.key, this.budgets.holder);
  }

  pauseUntil(until: number): void {
    this.seen.forget();
    this.takes.pause(until);
    pause(this.budgets, this.key, until);
  }

  /** Once what was asked of the database (a take, a reading) has landed. */
  async settled(): Promise<void> {
    await Promise.all([this.takes.settled(), this.seen.settled()]);
  }

  /**
   * The take's statement: as many tokens as `count` calls want and the bucket allows at `now`
   * (gcraTakeable), none unless at least one is there. Its condition is gcraReadyAt(arrival,
   * now, 0) <= now, which is ceil(max(arrival, now) - tolerance) <= now; the new arrival is
   * max(arrival, now) + n * spacing, and n comes back from the row the take wrote: the rest of
   * the statement reads the rows as they were before it, which another replica's take may
   * have changed while this one waited for the row's lock. A missing row is a full bucket.
   */
  private async take(
    now: number,
    place: QueuePlace | undefined,
    count: number,
  ): Promise<TakeAnswer<true>> {
    const { spacingMs, toleranceMs } = this.rules;
    const liveUntil = now + 2 * spacingMs + WAITER_GRACE_MS;
    const row = await this.budgets.first<TakeRow>(
      `WITH taken AS (
         INSERT INTO budget_buckets AS b (key, arrival, took)
         SELECT $1, $2::float8 + $3::int * $4::float8, $3::int
          WHERE NOT ${PAUSED} AND ${firstInLine(7)}
         ON CONFLICT (key) DO UPDATE
           SET arrival = GREATEST(b.arrival, $2::float8) + $4::float8 * ${TAKEABLE},
               took = ${TAKEABLE}
           WHERE ceil(GREATEST(b.arrival, $2::float8) - $5::float8) <= $2::float8
         RETURNING arrival, took
       ), ${queueUp(7)}
       SELECT (SELECT arrival FROM taken) AS taken, (SELECT took FROM taken) AS took,
              (SELECT arrival FROM budget_buckets WHERE key = $1) AS arrival,
              ${PAUSED_UNTIL} AS paused_until,
              NOT ${firstInLine(7)} AS behind`,
      [
        this.key,
        now,
        gcraTakeable(FULL, now, count, this.rules),
        spacingMs,
        toleranceMs,
        count,
        ...waiterParams(this.budgets.holder, place, liveUntil),
      ],
    );
    if (!row) throw new Error(`the take of ${this.key} answered no row`);
    if (row.taken !== null) {
      // Taken: no pause holds at `now`, and the next take can go no earlier than this.
      this.waiting = place !== undefined && place.next < Infinity;
      this.seen.set(now, { arrival: row.taken, pausedUntil: Number.NEGATIVE_INFINITY });
      return {
        taken: Array.from({ length: row.took ?? 1 }, () => true as const),
        nextAt: gcraReadyAt(row.taken, now, 0, this.rules),
      };
    }
    this.waiting = place !== undefined && place.rank < Infinity;
    const arrival = row.arrival ?? FULL;
    this.seen.set(now, { arrival, pausedUntil: row.paused_until });
    // Behind another replica's call: that one takes the token there is, this one the next.
    // With no token now, this one asks again when it comes: the other's call may be gone by
    // then (a replica's row lasts a while after its last call).
    const tokenNow = gcraReadyAt(arrival, now, 0, this.rules) <= now;
    const ahead = row.behind && tokenNow ? 1 : 0;
    const nextAt = gcraReadyAt(arrival, now, ahead, this.rules);
    return { taken: [], nextAt: Math.max(nextAt, row.paused_until) };
  }

  /** The bucket's row as it stands. */
  private async read(): Promise<Seen> {
    const row = await this.budgets.first<{ arrival: number | null; paused_until: number }>(
      `SELECT (SELECT arrival FROM budget_buckets WHERE key = $1) AS arrival,
              ${PAUSED_UNTIL} AS paused_until`,
      [this.key],
    );
    return { arrival: row?.arrival ?? FULL, pausedUntil: row?.paused_until ?? FULL };
  }
}
