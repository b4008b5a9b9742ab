/**
 * A sliding-window limiter per key (the bearer token: interface §8 limits "per user").
 * It keeps the instants of the accepted events of the last window; an event is allowed
 * when fewer than `limit` of them are younger than `windowMs`. Checking and counting are
 * separate so that a request refused for another reason (or a run start that fails
 * validation) does not use a slot.
 */

export interface SlidingWindowOptions {
  /** Events allowed per window. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs: number;
  /** Clock in epoch milliseconds. */
  now: () => number;
}

export type LimitVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class SlidingWindowLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #log = new Map<string, number[]>();

  constructor(options: SlidingWindowOptions) {
    this.#limit = options.limit;
    this.#windowMs = options.windowMs;
    this.#now = options.now;
  }

  /**
   * Whether one more event for `key` fits now. When it does not, `retryAfterSeconds` is
   * the whole seconds until the oldest event leaves the window (at least 1).
   */
  check(key: string): LimitVerdict {
    const log = this.#recent(key);
    if (log.length < this.#limit) return { allowed: true };
    const oldest = log[log.length - this.#limit] ?? this.#now();
    const waitMs = oldest + this.#windowMs - this.#now();
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  /** Counts one event for `key` now. */
  record(key: string): void {
    const log = this.#recent(key);
    log.push(this.#now());
    this.#log.set(key, log);
  }

  #recent(key: string): number[] {
    const cutoff = this.#now() - this.#windowMs;
    const log = (this.#log.get(key) ?? []).filter((at) => at > cutoff);
    this.#log.set(key, log);
    return log;
  }
}
