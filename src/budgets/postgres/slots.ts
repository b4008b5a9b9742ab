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
  private readonly releases: Rewrites;
  private readonly spends: Rewrites;

  constructor(private readonly db: BudgetDb) {
    this.releases = new Rewrites(
      db,
      `UPDATE budget_slots AS s SET until_at = r.until_at, held = FALSE
         FROM unnest($1::bigint[], $2::float8[]) AS r(id, until_at)
        WHERE s.id = r.id AND s.held`,
    );
    this.spends = new Rewrites(
      db,
      `UPDATE budget_slots AS s SET until_at = r.until_at
         FROM unnest($1::bigint[], $2::float8[]) AS r(id, until_at)
        WHERE s.id = r.id AND NOT s.held`,
    );
  }

  /**
   * Takes up to `count` slots of `key`, each counting until `untilAt`, as many as fewer than
   * `limit` counting at `now` leave room for, none while a pause holds: their ids, and `rows`
   * when none could be taken (only then): the key's slots as the statement found them, which
   * say when to ask again.
   * One round trip: `budget_take_slots` (migration 7) takes the key's advisory lock for the
   * rest of its call, prunes slots long freed, counts those that still count and inserts what
   * there is room for. Each of its statements reads the rows as they are when it runs (a
   * volatile function's do), so the count sees every slot taken before the lock was had. The
   * rows of a refusal are read as they were when the statement began: a take another replica
   * made while this one waited for the lock may be missing, so the next take may be asked a
   * little early, and is refused again then.
   */
  async occupy(
    key: string,
    now: number,
    slots: { limit: number; untilAt: number; held: boolean; count: number },
  ): Promise<{ taken: number[]; rows: SlotRows | undefined }> {
    const row = await this.db.first<{ ids: number[] | null } & ReadRow>(
      `WITH t AS (SELECT budget_take_slots($1, $2, $3, $4, $5, $6, $7)::float8[] AS ids)
       SELECT t.ids, r.* FROM t
         LEFT JOIN LATERAL (SELECT ${READ}) AS r ON cardinality(t.ids) = 0`,
      [key, now, slots.limit, slots.untilAt, slots.held, PRUNE_AFTER_MS, slots.count],
    );
    const taken = row?.ids ?? [];
    // The rows are read (their columns not null) only when nothing was taken.
    return { taken, rows: taken.length === 0 ? slotRows({ ...row }) : undefined };
  }

  /**
   * The held slot `id` was released: it counts until `untilAt`, then frees (not waited for).
   * Until its release lands, a slot counts as held.
   */
  release(id: number, untilAt: number): void {
    this.releases.add(id, untilAt);
  }

  /**
   * A window's slot taken ahead went with its call: it counts until `untilAt` (a window from the
   * call) instead of until the short while a take ahead counts for (not waited for). Lost in
   * an outage, the slot frees early, and replicas may go over the window by that call; Slack's
   * 429, which pauses them all, holds them back.
   */
  spend(id: number, untilAt: number): void {
    this.spends.add(id, untilAt);
  }

  /** A window's slot that no call spent: it is deleted, as if never taken (not waited for). */
  unspent(id: number): void {
    void this.db.post("DELETE FROM budget_slots WHERE id = $1 AND NOT held", [id]);
  }

  /** Once the slots' rewrites on their way (releases, spends) have landed. */
  async settled(): Promise<void> {
    await Promise.all([this.releases.settled(), this.spends.settled()]);
  }

  async read(key: string, now: number): Promise<SlotRows> {
    const row = await this.db.first<ReadRow>(`SELECT ${READ}`, [key, now]);
    return slotRows({ ...row });
  }
}

/** SQL: the slots of key $1 that count at $2, as SlotRows' columns. */
const READ = `ARRAY(SELECT until_at FROM budget_slots
                    WHERE key = $1 AND until_at > $2 AND NOT held ORDER BY until_at) AS free_at,
              ARRAY(SELECT id::float8 FROM budget_slots
                    WHERE key = $1 AND until_at > $2 AND held ORDER BY id) AS held,
              ${PAUSED_UNTIL} AS paused_until`;

interface ReadRow {
  free_at?: number[] | null;
  held?: number[] | null;
  paused_until?: number | null;
}

function slotRows(row: ReadRow): SlotRows {
  return {
    freeAt: row.free_at ?? [],
    held: row.held ?? [],
    pausedUntil: row.paused_until ?? Number.NEGATIVE_INFINITY,
  };
}

/**
 * How long slots' rewrites are gathered before they are sent, ms. A rewrite is never waited
 * for, and none is urgent: until its release lands a slot counts as held (it counts either
 * way), and a window's slot taken ahead counts AHEAD_MS, two seconds past the latest a call
 * spends it (window.ts). Gathered, the releases and spends of a burst of answered requests
 * and calls gone are a few statements, not one per round trip on the budgets' two connections,
 * where the takes the calls wait for would queue behind them.
 */
export const GATHER_MS = 250;

/**
 * Slots' new `until_at`s (`$1` their ids, `$2` the instants), gathered for GATHER_MS and sent
 * as one statement, one on its way at a time. `settled` (and BudgetDb.settled) sends what is
 * gathered at once.
 */
class Rewrites {
  private waiting: { id: number; untilAt: number }[] = [];
  private sending: Promise<void> | undefined;
  private cancelGather: (() => void) | undefined;

  constructor(
    private readonly db: BudgetDb,
    private readonly statement: string,
  ) {
    db.onSettle(() => this.flush());
  }

  add(id: number, untilAt: number): void {
    this.waiting.push({ id, untilAt });
    this.gather();
  }

  /** Once nothing added is left unwritten: what is gathered goes now. */
  async settled(): Promise<void> {
    for (this.flush(); this.sending; this.flush()) await this.sending;
  }

  private gather(): void {
    if (this.sending || this.cancelGather || this.waiting.length === 0) return;
    this.cancelGather = this.db.timer(GATHER_MS, () => this.flush());
  }

  /** What is gathered, sent now unless a statement is on its way (then after it lands). */
  private flush(): void {
    this.cancelGather?.();
    this.cancelGather = undefined;
    if (this.sending || this.waiting.length === 0) return;
    const batch = this.waiting;
    this.waiting = [];
    this.sending = this.db
      .post(this.statement, [batch.map((r) => r.id), batch.map((r) => r.untilAt)])
      .then(() => {
        this.sending = undefined;
        this.gather();
      });
  }
}
