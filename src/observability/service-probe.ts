import { RateLimitedError } from "../service/errors.js";
import { type Clock, systemClock } from "../time.js";

/** What the probe's one request is given. */
export interface ProbeCall {
  signal: AbortSignal;
  /** To be called when the request has to wait for the bot's own service budget. */
  onQueued: () => void;
}

export interface ServiceProbeOptions {
  /** One cheap request to the service, not retried (e.g. one page of GET /v1/threads). */
  request: (call: ProbeCall) => Promise<unknown>;
  /** The probe gives up (not reachable) after this long, ms; default 2_000. */
  timeoutMs?: number;
  /** Times the probe; default the system clock. */
  clock?: Clock;
}

/**
 * The `/readyz` check of the service: does it answer? A 429 is an answer (the service is
 * up, only busy). So is having to wait in the bot's own budget: the queue fills only when the
 * bot has been sending requests up to the service's limit, and a readiness check that failed
 * exactly when the bot is busiest would take it out of rotation for being useful.
 */
export function serviceProbe(options: ServiceProbeOptions): () => Promise<boolean> {
  const { timeoutMs = 2_000, clock = systemClock } = options;
  return async () => {
    const controller = new AbortController();
    const cancel = clock.timer(timeoutMs, () => controller.abort());
    let busy = false;
    try {
      await options.request({
        signal: controller.signal,
        onQueued: () => {
          busy = true;
          controller.abort();
        },
      });
      return true;
    } catch (error) {
      return busy || error instanceof RateLimitedError;
    } finally {
      cancel();
    }
  };
}
