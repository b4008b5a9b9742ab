import type { Allowance } from "./allowance.js";
import { FULL, type GcraRules, gcraAfterTake, gcraReadyAt, gcraRules } from "./gcra.js";

/**
 * A token bucket kept as one number, the "theoretical arrival time" (the GCRA form,
 * budgets/gcra.ts): a bucket of `capacity` tokens refilled at `perMinute`, starting full.
 * Keeping a time rather than a fractional token count means a timer armed for `readyAt()`
 * finds the token there, with no rounding drift over a long run.
 *
 * Over any window of W ms it lets through at most `capacity + perMinute * W / 60_000` takes.
 */
export class TokenBucket implements Allowance {
  private readonly rules: GcraRules;
  private arrival = FULL;

  /**
   * @param perMinute sustained rate, tokens per minute (> 0)
   * @param capacity burst size, tokens (>= 1)
   */
  constructor(perMinute: number, capacity: number) {
    this.rules = gcraRules(perMinute, capacity);
  }

  /**
   * The earliest instant (ms, same clock as `now`) at which a token is available, once
   * `ahead` takes (default 0) have gone before it.
   */
  readyAt(now: number, ahead = 0): number {
    return gcraReadyAt(this.arrival, now, ahead, this.rules);
  }

  /** Takes a token if one is available at `now`; false (and nothing taken) otherwise. */
  tryTake(now: number): boolean {
    if (this.readyAt(now) > now) return false;
    this.arrival = gcraAfterTake(this.arrival, now, this.rules);
    return true;
  }
}
