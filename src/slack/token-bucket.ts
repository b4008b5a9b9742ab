/**
 * A token bucket kept as one number, the "theoretical arrival time" (the GCRA form): a
 * bucket of `capacity` tokens refilled at `perMinute`, starting full. Keeping a time rather
 * than a fractional token count means a timer armed for `readyAt()` finds the token there,
 * with no rounding drift over a long run.
 *
 * Over any window of W ms it lets through at most `capacity + perMinute * W / 60_000` takes.
 */
export class TokenBucket {
  /** ms between two tokens at the sustained rate. */
  private readonly spacingMs: number;
  /** How far ahead of `now` the theoretical arrival time may run: the burst allowance. */
  private readonly toleranceMs: number;
  private arrival = Number.NEGATIVE_INFINITY;

  /**
   * @param perMinute sustained rate, tokens per minute (> 0)
   * @param capacity burst size, tokens (>= 1)
   */
  constructor(perMinute: number, capacity: number) {
    if (!(perMinute > 0)) throw new RangeError(`perMinute must be > 0, got ${perMinute}`);
    if (!(capacity >= 1)) throw new RangeError(`capacity must be >= 1, got ${capacity}`);
    this.spacingMs = 60_000 / perMinute;
    this.toleranceMs = (Math.floor(capacity) - 1) * this.spacingMs;
  }

  /**
   * The earliest instant (ms, same clock as `now`) at which a token is available, once
   * `ahead` takes (default 0) have gone before it.
   */
  readyAt(now: number, ahead = 0): number {
    const arrival = Math.max(this.arrival, now);
    return Math.max(now, Math.ceil(arrival + ahead * this.spacingMs - this.toleranceMs));
  }

  /** Takes a token if one is available at `now`; false (and nothing taken) otherwise. */
  tryTake(now: number): boolean {
    if (this.readyAt(now) > now) return false;
    this.arrival = Math.max(this.arrival, now) + this.spacingMs;
    return true;
  }
}
