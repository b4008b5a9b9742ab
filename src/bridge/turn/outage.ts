import { backoffMs, type Clock } from "../../time.js";
import { isTransient, serviceFailureKind } from "./service-failure.js";

export interface OutageOptions {
  /** Give up after the service has not answered for this long, ms. */
  giveUpAfterMs: number;
  clock: Clock;
  signal?: AbortSignal;
  /** Called after each transient failure, before waiting (the reply says we keep trying). */
  onRetry: (error: unknown, attempt: number) => void;
}

/** Backoff between attempts through an outage: up to 1 s at first, never more than 10 s. */
const OUTAGE_BACKOFF = { baseMs: 1_000, maxMs: 10_000 };

/**
 * Runs one step of a turn, retrying while the service is transiently unavailable, until
 * `giveUpAfterMs` has passed since the first failure. This is the bridge's one retry
 * layer: the service client it is given does not retry (bot.ts). The step itself must be
 * safe to run again: a question post looks in the thread before posting again.
 */
export async function throughOutage<T>(step: () => Promise<T>, options: OutageOptions): Promise<T> {
  const { clock, signal } = options;
  let firstFailure: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isTransient(error) || signal?.aborted) throw error;
      firstFailure ??= clock.now();
      if (clock.now() - firstFailure >= options.giveUpAfterMs) throw error;
      // A 429 is no outage: the service budget holds the next attempt until Retry-After,
      // and the reply shows it queued there.
      if (serviceFailureKind(error) === "rate_limited") continue;
      options.onRetry(error, attempt);
      await clock.sleep(backoffMs(attempt - 1, OUTAGE_BACKOFF), signal);
    }
  }
}
