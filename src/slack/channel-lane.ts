import type { CallFailure } from "./call-failure.js";
import type { Lane } from "./lane.js";
import { TokenBucket } from "./token-bucket.js";

/** A call waiting in a channel's queue, as the channel counts it. */
export interface Queued {
  /** Arrival order across channels: the call that waited longest goes first. */
  seq: number;
  /** Transient failures (5xx, network) so far. */
  failures: number;
  /** 429s met so far. */
  rateLimits: number;
}

/** How many failures a channel's calls ride out before they are given up. */
export interface RetryLimits {
  retries: number;
  rateLimitRetries: number;
}

/** An idle channel is forgotten after this long, ms (its bucket is full again by then). */
const IDLE_CHANNEL_MS = 60_000;

/**
 * The calls of one channel, first in, first out, at the channel's own pace: what the post
 * gate's and the note gate's lanes share. A call that fails for a reason worth waiting out
 * stays at the head, so the order holds across retries.
 */
export abstract class ChannelLane<Q extends Queued> implements Lane {
  readonly queue: Q[] = [];
  private readonly bucket: TokenBucket;
  protected lastActivity: number;

  constructor(pace: { perMinute: number; burst: number }, now: number) {
    this.bucket = new TokenBucket(pace.perMinute, pace.burst);
    this.lastActivity = now;
  }

  readyAt(now: number): number | undefined {
    return this.queue.length > 0 ? this.bucket.readyAt(now) : undefined;
  }

  goesBefore(other: ChannelLane<Q>): boolean {
    return (this.queue[0] as Q).seq < (other.queue[0] as Q).seq;
  }

  expired(now: number): boolean {
    return this.queue.length === 0 && now - this.lastActivity >= IDLE_CHANNEL_MS;
  }

  /** Takes the channel's token for the call at the head, and returns that call. */
  protected begin(now: number): Q {
    this.bucket.tryTake(now);
    return this.queue[0] as Q;
  }

  /**
   * What to do after the head call failed: `wait` (a 429, whose pause the scheduler
   * applies), the retry number whose backoff to wait, or `give_up`.
   */
  protected afterFailure(
    failure: CallFailure,
    limits: RetryLimits,
    now: number,
  ): "wait" | number | "give_up" {
    const head = this.queue[0] as Q;
    this.lastActivity = now;
    if (failure.kind === "rate_limited" && head.rateLimits++ < limits.rateLimitRetries)
      return "wait";
    if (failure.kind === "transient" && head.failures < limits.retries) return head.failures++;
    return "give_up";
  }

  abstract start(now: number): Promise<unknown>;
  abstract landed(value: unknown, now: number): void;
  abstract failed(failure: CallFailure, error: unknown, now: number): number | undefined;
  abstract abandoned(error: unknown): void;
  abstract close(): void;
}
