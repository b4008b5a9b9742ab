import type { CallFailure } from "../web-api/call-failure.js";

/*
 * The contract between the call scheduler and the policies on it (the edit pacer, the post
 * gate): a policy registers a method with its budget, and keeps one lane per key.
 */

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
  /**
   * Where the lane's next call stands among the calls of its method that are ready together:
   * the lowest rank goes first. Built from the clock's instants (how long a call has waited,
   * when its message was last updated), so that replicas sharing a budget can compare ranks
   * and hand each token to the call that waited longest in any of them.
   */
  rank(): number;
  /**
   * Takes the lane's own pace for the call about to start (once the method's budget is taken);
   * false when there is none left after all, and the call waits: a pace kept in a database that
   * replicas share may have been spent by another since `readyAt`. Absent: no pace of its own.
   */
  take?(now: number): boolean;
  /**
   * Whether its next call waits for a pace it shares with the other lanes of its method (the
   * interim edits' pace of a workspace): of such lanes ready together, one counts among the
   * calls the method's budget is taken for, as that pace lets one go at a time. Absent: false.
   */
  sharesPace?(): boolean;
  /**
   * The call about to go is made ready (its content decided), just before the method's budget
   * is taken for it; false when it turns out to have nothing to send: the lane then has no call
   * and no budget is spent. Absent: a call always has something to send.
   */
  prepare?(now: number): boolean;
  /** Makes the next call; the budget for it (and the lane's own pace) is already taken. */
  start(now: number): Promise<unknown>;
  /** The call made by `start` landed with `value`. */
  landed(value: unknown, now: number): void;
  /**
   * The call made by `start` failed. Returns the retry number (0 for the first) whose backoff
   * the lane wants waited before its next call; undefined when it wants none (it gave up, has
   * something newer, or waits out a 429, whose pause the scheduler applies anyway).
   */
  failed(failure: CallFailure, error: unknown, now: number): number | undefined;
  /**
   * A 429 of one of its calls pauses only this lane (MethodBudget.pauses "lane") until
   * `until`: a lane whose pace is shared by replicas passes the pause on to them.
   */
  pauseUntil?(until: number): void;
  /** The call in flight failed after close: its callers learn of `error`, nothing is retried. */
  abandoned(error: unknown): void;
  /** Nothing happened for long enough: true, and whoever still waits is told, to drop the lane. */
  expired(now: number): boolean;
  /** The method closes: what waits is rejected; a call in flight still settles. */
  close(): void;
}

/** A method's share of each workspace's limits, and how its failures are waited out. */
export interface MethodBudget<L extends Lane> {
  /** Sustained calls per minute per workspace (> 0). */
  perMinute: number;
  /** Calls one workspace may make back to back (>= 1); unused with `window`. */
  burst: number;
  /**
   * `perMinute` counts the calls of any 60 s window, with no pace within it (sliding-window.ts):
   * for a method whose minute holds few calls (Tier 2), where a burst matters most.
   */
  window?: boolean;
  /**
   * What a 429 pauses, for Retry-After: every call of the method in the workspace (default:
   * Slack's tiers count per workspace and method), or only the lane that met it
   * (`chat.postMessage` is limited per channel).
   */
  pauses?: "method" | "lane";
  /** Ceiling of the first backoff after a transient failure, ms; doubles per retry up to 30 s; default 1_000. */
  retryDelayMs?: number;
  /** Metrics hook: Slack answered 429 to one of `lane`'s calls. */
  onRateLimited?: (lane: L, retryAfterMs: number) => void;
}

/** What a policy sees of the scheduler: the lanes of its one method. */
export interface Lanes<L extends Lane> {
  /** True once the method (or the whole scheduler) is closed. */
  readonly closed: boolean;
  /** The lane of `key` in workspace `team`, made by `create` the first time. */
  get(team: string, key: string, create: () => L): L;
  find(team: string, key: string): L | undefined;
  all(): L[];
  /**
   * A lane of `team` has something new: the scheduler looks after the current tick. `key`:
   * the lane that has (only it is asked among the lanes that had nothing to send, so a wake
   * costs what changed, not every lane kept); without it, every lane of `team` is asked.
   */
  wake(team: string, key?: string): void;
  /** Calls landed, and 429s met, since the start. */
  counts(): { landed: number; rateLimited: number };
  /** Stops the method: lanes reject what waits; calls in flight still settle. */
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
