import { randomUUID } from "node:crypto";

/** One statement on the budgets' connections: its rows. */
export type BudgetQuery = (
  text: string,
  params: readonly unknown[],
) => Promise<Record<string, unknown>[]>;

export interface BudgetDbOptions {
  /** This replica among those sharing the budgets (waiters.ts); default a random id. */
  holder?: string;
  /**
   * A budget statement failed (the server unreachable, a timeout): told with the error. While
   * it lasts takes are not asked, so the statements told are one per `retryMs` and the writes
   * nobody waits for (a release, a pause, a sweep). Errors name budgets by key, never a
   * token. Default: nothing.
   */
  onError?: (error: unknown) => void;
  /**
   * After a failure, the budgets refuse every take for this long without asking the server,
   * then try it again, ms; default 1_000. A bot that cannot reach its database makes no call
   * that might break a limit, and a server that hangs costs one statement's time limit per
   * `retryMs`, not one per budget asked.
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
  /**
   * Calls `fn` after `ms` and answers what cancels it: when writes held back to go together
   * are sent (SlotTable). Default a timer that never keeps the process open (a close sends
   * them anyway, `settled`).
   */
  timer?: (ms: number, fn: () => void) => () => void;
}

function unrefTimer(ms: number, fn: () => void): () => void {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

/**
 * Rows are swept this long after they stopped counting, ms: a replica whose clock runs behind
 * the sweeper's by less than that still finds every row it would count.
 */
const SWEEP_MARGIN_MS = 60_000;

/**
 * The connections the shared budgets use, and what they do when they fail: each statement
 * runs through `attempt`, whose answer is undefined while the server is out of reach (the
 * budget then refuses). Every statement is awaited; nothing here waits on the event loop.
 * It also sweeps the tables now and then, so that budgets of channels and messages long gone
 * do not accumulate.
 */
export class BudgetDb {
  private downUntil = Number.NEGATIVE_INFINITY;
  private nextSweep = Number.NEGATIVE_INFINITY;
  private readonly retryMs: number;
  private readonly sweepEveryMs: number;
  /** Statements sent and not yet answered. */
  private readonly pending = new Set<Promise<unknown>>();
  /** What sends the writes held back to go together (SlotTable's rewrites) at once. */
  private readonly flushes: (() => void)[] = [];
  readonly holder: string;
  /** BudgetDbOptions.timer. */
  readonly timer: (ms: number, fn: () => void) => () => void;

  constructor(
    private readonly query: BudgetQuery,
    private readonly options: BudgetDbOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 1_000;
    this.sweepEveryMs = options.sweepEveryMs ?? 600_000;
    this.holder = options.holder ?? randomUUID();
    this.timer = options.timer ?? unrefTimer;
  }

  /** Whether a statement failed less than `retryMs` before `now`: nothing is asked meanwhile. */
  down(now: number): boolean {
    return now < this.downUntil;
  }

  /** When a budget refused for an outage at `now` is worth asking again. */
  retryAt(now: number): number {
    return Math.max(this.downUntil, now + 1);
  }

  /** What `statement` answers; undefined while the server fails or failed less than retryMs ago. */
  async attempt<T>(now: number, statement: () => Promise<T>): Promise<T | undefined> {
    if (this.down(now)) return undefined;
    if (now >= this.nextSweep) {
      this.nextSweep = now + this.sweepEveryMs;
      this.sweep(now);
    }
    try {
      return await this.track(statement());
    } catch (error) {
      this.downUntil = Math.max(this.downUntil, now + this.retryMs);
      this.options.onError?.(error);
      return undefined;
    }
  }

  /** The first row `text` answers. */
  async first<T>(text: string, params: readonly unknown[]): Promise<T | undefined> {
    const rows = await this.query(text, params);
    return rows[0] as T | undefined;
  }

  /**
   * A write nobody waits for (a release, a pause, a sweep): sent, and its failure told to
   * `onError`. Lost in an outage, it costs what its comment at the caller says. Resolves once
   * it is answered or failed, never rejects.
   */
  post(text: string, params: readonly unknown[]): Promise<void> {
    return this.track(this.query(text, params)).then(
      () => undefined,
      (error: unknown) => this.options.onError?.(error),
    );
  }

  /**
   * Once nothing is left on its way: every statement sent has been answered, and so has every
   * one sent meanwhile by those answers' consequences (a take landed, a call went, the next
   * take was asked). At a close, and for tests whose clock stands still while a round trip
   * takes real time.
   */
  async settled(): Promise<void> {
    for (const flush of this.flushes) flush();
    while (this.pending.size > 0) {
      await Promise.allSettled(this.pending);
      // What the answers set off (a scheduler's pump) runs before the next look.
      await new Promise((resolve) => setImmediate(resolve));
      for (const flush of this.flushes) flush();
    }
  }

  /**
   * `flush` sends writes held back to go together with later ones, at once: `settled` calls it,
   * so that nothing held back is left unwritten at a close (or in a test that waits for it).
   */
  onSettle(flush: () => void): void {
    this.flushes.push(flush);
  }

  private track<T>(statement: Promise<T>): Promise<T> {
    this.pending.add(statement);
    const done = () => this.pending.delete(statement);
    statement.then(done, done);
    return statement;
  }

  /** A take was refused: told to `onRefused`. */
  refused(): void {
    this.options.onRefused?.();
  }

  /**
   * Deletes what no longer counts: a bucket whose arrival time has passed is as good as none
   * (full), a freed slot, an ended pause and a waiter no longer live are nothing.
   */
  sweep(now: number): void {
    const before = now - SWEEP_MARGIN_MS;
    this.post("DELETE FROM budget_buckets WHERE arrival < $1", [before]);
    this.post("DELETE FROM budget_slots WHERE until_at <= $1", [before]);
    this.post("DELETE FROM budget_pauses WHERE paused_until <= $1", [before]);
    this.post("DELETE FROM budget_waiters WHERE live_until <= $1", [before]);
  }
}
