/**
 * One re-armable timer: set for the next instant something can go, never more than one
 * pending, so a waiting workspace costs one timer and no polling.
 */
export class Alarm {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private at = Number.NaN;

  /**
   * @param ring called when the alarm goes off
   * @param now the clock `set` is measured on, ms
   */
  constructor(
    private readonly ring: () => void,
    private readonly now: () => number,
  ) {}

  /** Rings at `at` (ms on the `now` clock), replacing any earlier setting. */
  set(at: number): void {
    if (this.timer !== undefined && this.at === at) return;
    this.clear();
    this.at = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.ring();
      },
      Math.max(0, at - this.now()),
    );
  }

  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
