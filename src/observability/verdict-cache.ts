import { type Clock, systemClock } from "../time.js";

export interface VerdictCacheOptions {
  /** How long one verdict is given again before the check is asked anew, ms; default 10_000. */
  maxAgeMs?: number;
  /** Reads the time; default the system clock. */
  clock?: Clock;
}

/**
 * A readiness check that is asked at most once per `maxAgeMs`, however often and however many
 * callers at once ask for it: they share the check in flight and then its verdict, a failed
 * one too. `/readyz` is served to whoever reaches the port, and the service check costs a
 * request from the budget every answer needs; this bounds what a probe loop can take from it.
 */
export function cachedVerdict(
  check: () => Promise<boolean> | boolean,
  options: VerdictCacheOptions = {},
): () => Promise<boolean> {
  const { maxAgeMs = 10_000, clock = systemClock } = options;
  let last: { askedAt: number; verdict: Promise<boolean>; settled: boolean } | undefined;
  return () => {
    const now = clock.now();
    // A check still in flight is shared even past maxAgeMs, so two never overlap. A clock
    // set back is no reason to keep a verdict longer.
    if (last && (!last.settled || (now >= last.askedAt && now - last.askedAt < maxAgeMs))) {
      return last.verdict;
    }
    const entry = { askedAt: now, settled: false, verdict: Promise.resolve(false) };
    entry.verdict = Promise.resolve()
      .then(check)
      .then(
        (ok) => ok === true,
        () => false,
      )
      .finally(() => {
        entry.settled = true;
      });
    last = entry;
    return entry.verdict;
  };
}
