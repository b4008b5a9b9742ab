import { PostGate } from "./post-gate.js";
import type { CallScheduler } from "./scheduler.js";

export interface StreamGateOptions {
  /** The scheduler every Slack call of the bot goes through. */
  scheduler: CallScheduler;
  /**
   * `chat.startStream` calls in any minute per workspace, and as many `chat.stopStream` calls;
   * default 19 (both are Tier 2, about 20 a minute). A window, not a pace: a burst of questions
   * starts that many streams at once, and the next wait for the window to move on.
   */
  startsPerMinute?: number;
  /**
   * `chat.appendStream` calls in any minute per workspace; default 95 (Tier 4, "100+ per
   * minute … generous burst behavior"): a window too, spent as the answers need it.
   */
  appendsPerMinute?: number;
  /**
   * Least time between two appends to one message, ms; default 1_000: a message changes about
   * once a second at most, streamed or edited (contract.md).
   */
  appendIntervalMs?: number;
  /** Metrics hook: Slack answered 429 to a stream method. */
  onRateLimited?: (method: string) => void;
}

export const START = "chat.startStream";
export const APPEND = "chat.appendStream";
export const STOP = "chat.stopStream";

/**
 * The three stream methods on the call scheduler, each on its own budget, as gates of the
 * post gate's kind: one queue per key at its own pace, a 429 waited out and the same call
 * repeated (its payload is made when it goes). Starts queue per channel (they post a
 * message); appends and stops per message. An append is never sent twice after a failure
 * whose outcome is unknown (its text could show twice): the reply decides what follows.
 * With replicas, the methods' workspace budgets are shared, but each lane's own pace is the
 * replica's: a message is written by the replica holding its turn, and a channel's starts
 * have no pace of Slack's beyond the tier.
 */
export class StreamGate {
  readonly starts: PostGate;
  readonly appends: PostGate;
  readonly stops: PostGate;

  constructor(options: StreamGateOptions) {
    const { scheduler, onRateLimited } = options;
    const tier2 = options.startsPerMinute ?? 19;
    const hook = (method: string) =>
      onRateLimited && { onRateLimited: () => onRateLimited(method) };
    this.starts = new PostGate({
      scheduler,
      method: START,
      pauses: "method",
      // Only the tier limits a start (the fake Slack and bench/floors.ts assume the same): the
      // channel's one-post-a-second is chat.postMessage's. Starts queue per channel, one at a time.
      perSecond: tier2,
      burst: tier2,
      workspacePerMinute: tier2,
      workspaceWindow: true,
      localPace: true,
      ...hook(START),
    });
    this.appends = new PostGate({
      scheduler,
      method: APPEND,
      pauses: "method",
      perSecond: 1_000 / (options.appendIntervalMs ?? 1_000),
      burst: 1,
      workspacePerMinute: options.appendsPerMinute ?? 95,
      workspaceWindow: true,
      retries: 0,
      localPace: true,
      ...hook(APPEND),
    });
    this.stops = new PostGate({
      scheduler,
      method: STOP,
      pauses: "method",
      workspacePerMinute: tier2,
      workspaceWindow: true,
      retries: 2,
      localPace: true,
      ...hook(STOP),
    });
  }
}
