import { ServiceError } from "../service/errors.js";

/** Errors that say the service is (for now) not answering, as opposed to refusing the request. */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return false;
  return (
    error.kind === "connection" ||
    error.kind === "timeout" ||
    error.kind === "server" ||
    error.kind === "rate_limited" ||
    error.kind === "protocol"
  );
}

export interface OutageOptions {
  /** Give up after the service has not answered for this long, ms. */
  giveUpAfterMs: number;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** Called after each transient failure, before waiting (the reply says we keep trying). */
  onRetry: (error: unknown, attempt: number) => void;
}

/**
 * Runs one step of a turn, retrying while the service is transiently unavailable, with a
 * capped exponential backoff, until `giveUpAfterMs` has passed since the first failure.
 * The step itself must be safe to run again (see turn-runner: posts look before posting).
 */
export async function throughOutage<T>(step: () => Promise<T>, options: OutageOptions): Promise<T> {
  let firstFailure: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!isTransient(error) || options.signal?.aborted) throw error;
      firstFailure ??= options.now();
      if (options.now() - firstFailure >= options.giveUpAfterMs) throw error;
      options.onRetry(error, attempt);
      await options.sleep(Math.min(1_000 * 2 ** (attempt - 1), 10_000), options.signal);
    }
  }
}
