import type { Clock } from "../../time.js";

/**
 * One re-armable timer: set for the next instant something can go, never more than one
 * pending, so a waiting workspace costs one timer and no polling.
 */
export class Alarm {
  private cancel: (() => void) | undefined;
  private at = Number.NaN;

  /**
   * @param ring called when the alarm goes off
   * @param clock what `set` is measured on and what keeps the timer
   */
  constructor(
    private readonly ring: () => void,
    private readonly clock: Clock,
  ) {}

  /** Rings at `at` (ms on the clock), replacing any earlier setting. */
  set(at: number): void {
    if (this.cancel !== undefined && this.at === at) return;
    this.clear();
    this.at = at;
    this.cancel = this.clock.timer(Math.max(0, at - this.clock.now()), () => {
      this.cancel = undefined;
      this.ring();
    });
  }

  clear(): void {
    this.cancel?.();
    this.cancel = undefined;
  }
}
