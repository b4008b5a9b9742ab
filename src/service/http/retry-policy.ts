import { backoffMs } from "../../time.js";
import {
  ConnectionError,
  RateLimitedError,
  ServerError,
  type ServiceError,
  TimeoutError,
} from "../errors.js";

/** Which failed requests are sent again, and after how long. */

export interface RetryTiming {
  /** Full-jitter exponential backoff base, ms. */
  baseDelayMs: number;
  /** Cap of one backoff delay, ms (a `Retry-After` is honoured even when longer). */
  maxDelayMs: number;
  /** Jitter source in [0, 1). */
  random: () => number;
}

/**
 * When a failed attempt may be sent again.
 *
 * A POST creates something (a thread, a message, a run) or triggers a run. Sending it again
 * is only safe when the first attempt certainly had no effect: the rate limiter refused it
 * (429) or the connection was never established (`sent` false). After a reset or a timeout
 * the service may already have processed the body, and a retry could post the message or
 * start the run twice, so those errors go to the caller (who can check the thread's state).
 * GETs, and POSTs marked idempotent, have no such risk and also retry on 5xx and timeouts.
 */
export function mayRetry(
  error: ServiceError,
  request: { method: string; idempotent?: boolean },
): boolean {
  if (error instanceof RateLimitedError) return true;
  if (error instanceof ConnectionError && !error.sent) return true;
  if (request.method !== "GET" && request.idempotent !== true) return false;
  return (
    error instanceof ServerError ||
    error instanceof ConnectionError ||
    error instanceof TimeoutError
  );
}

/**
 * How long to wait before retry number `retry` (0 for the first): what the service asked
 * for with `Retry-After`, else the project's one backoff (full jitter, see time.ts).
 */
export function retryDelayMs(error: ServiceError, retry: number, timing: RetryTiming): number {
  if (error instanceof RateLimitedError && error.retryAfter !== undefined) {
    return Math.ceil(error.retryAfter * 1000);
  }
  return backoffMs(retry, {
    baseMs: timing.baseDelayMs,
    maxMs: timing.maxDelayMs,
    random: timing.random,
  });
}
