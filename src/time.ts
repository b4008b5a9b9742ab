import { setTimeout as delay } from "node:timers/promises";

/**
 * Time, in one place: the clock every module is given (never `Date.now` or `setTimeout`
 * directly), the one bounded wait and the one backoff. The composition root makes the
 * system clock; tests pass a manual one and move time themselves.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason once it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` after `ms`; the returned function cancels it (safe to call twice). */
  timer(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => delay(ms, undefined, signal ? { signal } : {}),
  timer(ms, fn) {
    const handle = setTimeout(fn, ms);
    return () => clearTimeout(handle);
  },
};

/** How a piece of work stands after a bounded wait; it goes on either way. */
export type Settled<T> =
  | { state: "fulfilled"; value: T }
  | { state: "rejected"; error: unknown }
  | { state: "pending" };

/**
 * Waits for `work` at most `ms` and says how it stands. Never rejects: a failure is a
 * state, so callers that only need a bounded wait can ignore the result.
 */
export function settleWithin<T>(
  work: Promise<T>,
  ms: number,
  clock: Clock = systemClock,
): Promise<Settled<T>> {
  return new Promise<Settled<T>>((resolve) => {
    const cancel = clock.timer(ms, () => resolve({ state: "pending" }));
    work.then(
      (value) => {
        cancel();
        resolve({ state: "fulfilled", value });
      },
      (error: unknown) => {
        cancel();
        resolve({ state: "rejected", error });
      },
    );
  });
}

export interface Backoff {
  /** The first retry's ceiling, ms. */
  baseMs: number;
  /** No single delay is longer, ms. */
  maxMs: number;
  /** Jitter source in [0, 1); default Math.random. Tests pass a constant. */
  random?: () => number;
}

/**
 * The delay before retry number `retry` (0 for the first): "full jitter", a random share of
 * `min(maxMs, baseMs · 2^retry)`, so that many callers failing together do not come back
 * together. The one backoff of the project: the service client, the Slack scheduler and the
 * bridge's outage wait all use it.
 */
export function backoffMs(retry: number, { baseMs, maxMs, random = Math.random }: Backoff): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, retry));
  return Math.floor(random() * ceiling);
}
