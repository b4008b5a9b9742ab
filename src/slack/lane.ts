import type { CallFailure } from "./call-failure.js";

/**
 * The calls of one key (a message being edited, a channel being posted to) as a policy keeps
 * them. The scheduler asks a lane when it has something and hands it the outcome; it keeps
 * at most one call of a lane in flight and asks for that call only at the moment it goes,
 * so a lane that keeps just its latest payload never sends a stale one.
 */
export interface Lane {
  /**
   * The earliest instant (ms) its next call may go by the lane's own rules; undefined when it
   * has nothing to send. Not asked while one of its calls is in flight.
   */
  readyAt(now: number): number | undefined;
  /** Among lanes of one method that are ready together, whether this one goes first. */
  goesBefore(other: this): boolean;
  /** Makes the next call; the budget for it is already taken. */
  start(now: number): Promise<unknown>;
  /** The call made by `start` landed with `value`. */
  landed(value: unknown, now: number): void;
  /**
   * The call made by `start` failed. Returns the retry number (0 for the first) whose backoff
   * the lane wants waited before its next call; undefined when it wants none (it gave up, has
   * something newer, or waits out a 429, whose pause the scheduler applies anyway).
   */
  failed(failure: CallFailure, error: unknown, now: number): number | undefined;
  /** The call in flight failed after close: its callers learn of `error`, nothing is retried. */
  abandoned(error: unknown): void;
  /** Nothing happened for long enough: true, and whoever still waits is told, to drop the lane. */
  expired(now: number): boolean;
  /** The method closes: what waits is rejected; a call in flight still settles. */
  close(): void;
}

/** Metrics hooks must not break the pacing: a failing one is not a reason to lose a call. */
export function notify(hook: () => void): void {
  try {
    hook();
  } catch {
    // Deliberately ignored, see above.
  }
}
