/**
 * At most `limit` takes in any window of `windowMs` (default a minute), with no pace inside
 * it: the whole window's allowance may go at once. Slack's Tier 2 methods allow about 20
 * calls a minute; a token bucket that never exceeds that leaves only a burst of a few, where
 * a window lets a burst of questions each start its stream at once.
 *
 * The same two questions as a token bucket (token-bucket.ts), so the scheduler takes either.
 */
export class SlidingWindow {
  /** When each take within the last window happened, oldest first. */
  private readonly takes: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {
    if (!(limit >= 1)) throw new RangeError(`limit must be >= 1, got ${limit}`);
  }

  /**
   * The earliest instant at which a take is allowed, once `ahead` takes (default 0) have gone
   * before it. Takes beyond this window's are placed in later windows, a window apart.
   */
  readyAt(now: number, ahead = 0): number {
    this.forget(now);
    const over = this.takes.length + ahead - this.limit;
    if (over < 0) return now;
    const windows = Math.floor(over / this.limit);
    const leaving = this.takes[over % this.limit] ?? now;
    return Math.max(now, leaving + (windows + 1) * this.windowMs);
  }

  /** Takes one if allowed at `now`; false (and nothing taken) otherwise. */
  tryTake(now: number): boolean {
    if (this.readyAt(now) > now) return false;
    this.takes.push(now);
    return true;
  }

  private forget(now: number): void {
    while (this.takes.length > 0 && (this.takes[0] as number) <= now - this.windowMs) {
      this.takes.shift();
    }
  }
}
