import { randomUUID } from "node:crypto";
import type { SyncPostgres } from "../../store/postgres/sync-client.js";

export interface BudgetDbOptions {
  /** This replica among those sharing the budgets (waiters.ts); default a random id. */
  holder?: string;
  /**
   * A budget statement failed (the server unreachable, a timeout): told with the error, at
   * most once per `retryMs` while it lasts. (Posted writes, a release, a pause, a sweep, tell
   * theirs through the connection's `onLateError`.)
   * Errors name budgets by key, never a token. Default: nothing.
   */
  onError?: (error: unknown) => void;
  /**
   * After a failure, the budgets refuse every take for this long without asking the server,
   * then try it again, ms; default 1_000. A bot that cannot reach its database makes no call
   * that might break a limit, and a server that hangs costs one call timeout per wait, not one
   * per budget asked.
   */
  retryMs?: number;
  /** Rows of budgets nobody used for a while are deleted at most this often, ms; default 600_000. */
  sweepEveryMs?: number;
  /**
   * A Slack call found its shared budget spent when this replica's last reading said it could
   * go (another replica took it first or has an older call waiting, or the database was out of
   * reach): it waits (metrics).
   */
  onRefused?: () => void;
}

/**
 * Rows are swept this long after they stopped counting, ms: a replica whose clock runs behind
 * the sweeper's by less than that still finds every row it would count.
 */
const SWEEP_MARGIN_MS = 60_000;

/**
 * The connection the shared budgets use, and what they do when it fails: each statement runs
 * through `attempt`, which answers with the budget's fallback (refuse, wait) while the server
 * is out of reach. It also sweeps the tables now and then, so that budgets of channels and
 * messages long gone do not accumulate.
 */
export class BudgetDb {
  private downUntil = Number.NEGATIVE_INFINITY;
  private nextSweep = Number.NEGATIVE_INFINITY;
  private readonly retryMs: number;
  private readonly sweepEveryMs: number;
  readonly holder: string;

  constructor(
    readonly db: SyncPostgres,
    private readonly options: BudgetDbOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 1_000;
    this.sweepEveryMs = options.sweepEveryMs ?? 600_000;
    this.holder = options.holder ?? randomUUID();
  }

  /** `statement`'s answer; `fallback`'s while the server fails or failed less than retryMs ago. */
  attempt<T>(now: number, statement: () => T, fallback: () => T): T {
    if (now < this.downUntil) return fallback();
    try {
      if (now >= this.nextSweep) {
        this.nextSweep = now + this.sweepEveryMs;
        this.sweep(now);
      }
      return statement();
    } catch (error) {
      this.downUntil = now + this.retryMs;
      this.options.onError?.(error);
      return fallback();
    }
  }

  /** A take was refused: told to `onRefused`. */
  refused(): void {
    this.options.onRefused?.();
  }

  /** When a budget refused for an outage at `now` is worth asking again. */
  retryAt(now: number): number {
    return Math.max(this.downUntil, now + 1);
  }

  /**
   * Deletes what no longer counts: a bucket whose arrival time has passed is as good as none
   * (full), a freed slot, an ended pause and a waiter no longer live are nothing.
   */
  sweep(now: number): void {
    const before = now - SWEEP_MARGIN_MS;
    this.db.post("DELETE FROM budget_buckets WHERE arrival < $1", [before]);
    this.db.post("DELETE FROM budget_slots WHERE until_at <= $1", [before]);
    this.db.post("DELETE FROM budget_pauses WHERE paused_until <= $1", [before]);
    this.db.post("DELETE FROM budget_waiters WHERE live_until <= $1", [before]);
  }
}
