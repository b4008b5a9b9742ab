import { type Clock, systemClock } from "../../src/time.js";

/** The system clock, read `ms` later than it is: a bot started "later" than the last one. */
export function clockAheadBy(ms: number): Clock {
  return { ...systemClock, now: () => systemClock.now() + ms };
}

interface Scheduled {
  at: number;
  seq: number;
  fn: () => void;
}

export interface ManualClockOptions {
  /**
   * A sleep moves time forward itself, by what it asked for (firing the timers that fall
   * due on the way), so a single flow of work that only waits by sleeping runs through
   * without the test advancing anything. Default false: only `advance` moves time.
   */
  sleepsAdvance?: boolean;
  /**
   * What must land before the next timer fires, beyond promise callbacks: a database's round
   * trips, which take real time while this clock stands still (budgets shared in PostgreSQL).
   */
  settle?: () => Promise<void>;
}

/**
 * A clock that moves only when the test says so. Timers and sleeps wait on it; `advance`
 * moves time forward, firing what falls due in order and letting promises settle in
 * between, so code under test sees time pass exactly as it would, without a real wait.
 */
export class ManualClock implements Clock {
  /** Every sleep asked for, ms, in order (also those aborted). */
  readonly sleeps: number[] = [];
  private current: number;
  private seq = 0;
  private scheduled: Scheduled[] = [];
  private watchers: (() => void)[] = [];
  private readonly sleepsAdvance: boolean;
  private readonly settleMore: (() => Promise<void>) | undefined;

  constructor(start = Date.UTC(2026, 0, 1), options: ManualClockOptions = {}) {
    this.current = start;
    this.sleepsAdvance = options.sleepsAdvance ?? false;
    this.settleMore = options.settle;
  }

  now(): number {
    return this.current;
  }

  timer(ms: number, fn: () => void): () => void {
    const entry: Scheduled = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.scheduled.push(entry);
    for (const watch of this.watchers.splice(0)) watch();
    return () => {
      this.scheduled = this.scheduled.filter((s) => s !== entry);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    const slept = new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        cancel();
        reject(signal?.reason);
      };
      const cancel = this.timer(ms, () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    if (this.sleepsAdvance && !signal?.aborted) void this.advance(ms);
    return slept;
  }

  /** Timers set and not yet fired or cancelled. */
  get pending(): number {
    return this.scheduled.length;
  }

  /** Resolves once at least `count` timers are waiting (the code under test reached its wait). */
  async waitForTimers(count = 1): Promise<void> {
    while (this.scheduled.length < count) {
      await new Promise<void>((resolve) => this.watchers.push(resolve));
    }
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const until = this.current + ms;
    for (;;) {
      await settle();
      await this.settleMore?.();
      const next = this.scheduled
        .filter((s) => s.at <= until)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.scheduled = this.scheduled.filter((s) => s !== next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    // Another advance running alongside may already have gone further.
    this.current = Math.max(this.current, until);
    await settle();
    await this.settleMore?.();
  }
}

/** Lets pending promise callbacks and I/O callbacks run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface Armed {
  due: number;
  fn: () => void;
  handle: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Real time that a test can move forward at once: timers run as usual, and `skip(ms)`
 * makes `ms` pass in an instant, firing every timer that falls due. For the whole bot in
 * end-to-end tests, where real sockets need real time but a time limit need not be waited.
 */
export class SkippableClock implements Clock {
  private offset = 0;
  private readonly armed = new Set<Armed>();

  now(): number {
    return Date.now() + this.offset;
  }

  timer(ms: number, fn: () => void): () => void {
    const entry: Armed = { due: this.now() + Math.max(0, ms), fn, handle: undefined };
    this.armed.add(entry);
    this.arm(entry);
    return () => {
      clearTimeout(entry.handle);
      this.armed.delete(entry);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        cancel();
        reject(signal?.reason);
      };
      const cancel = this.timer(ms, () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Makes `ms` pass now: every timer due by then fires. */
  skip(ms: number): void {
    this.offset += ms;
    for (const entry of this.armed) {
      clearTimeout(entry.handle);
      this.arm(entry);
    }
  }

  private arm(entry: Armed): void {
    entry.handle = setTimeout(
      () => {
        this.armed.delete(entry);
        entry.fn();
      },
      Math.max(0, entry.due - this.now()),
    );
  }
}
