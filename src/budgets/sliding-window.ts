import type { Allowance } from "./allowance.js";
import { inWindow, type WindowRules, windowReadyAt, windowRules } from "./window.js";

/**
 * At most `limit` takes in any window of `windowMs` (default a minute), with no pace inside
 * it: the whole window's allowance may go at once. Slack's Tier 2 methods allow about 20
 * calls a minute; a token bucket that never exceeds that leaves only a burst of a few, where
 * a window lets a burst of questions each start its stream at once.
 *
 * The same two questions as a token bucket (token-bucket.ts), so the scheduler takes either.
 */
export class SlidingWindow implements Allowance {
  private readonly rules: WindowRules;
  /** When each take within the last window happened, oldest first. */
  private readonly takes: number[] = [];

  constructor(limit: number, windowMs = 60_000) {
    this.rules = windowRules(limit, windowMs);
  }

  /**
   * The earliest instant at which a take is allowed, once `ahead` takes (default 0) have gone
   * before it (budgets/window.ts).
   */
  readyAt(now: number, ahead = 0): number {
    this.forget(now);
    return windowReadyAt(this.takes, now, ahead, this.rules);
  }

  /** Takes one if allowed at `now`; false (and nothing taken) otherwise. */
  tryTake(now: number): boolean {
    if (this.readyAt(now) > now) return false;
    this.takes.push(now);
    return true;
  }

  private forget(now: number): void {
    while (this.takes.length > 0 && !inWindow(this.takes[0] as number, now, this.rules)) {
      this.takes.shift();
    }
  }
}
