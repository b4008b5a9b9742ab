import type { Allowance } from "../../budgets/allowance.js";
import { TokenBucket } from "../../budgets/token-bucket.js";
import type { CallFailure } from "../web-api/call-failure.js";
import type { Lane } from "./lane.js";

/** A call waiting in a channel's queue, as the channel counts it. */
export interface Queued {
  /**
   * When the call was queued (ArrivalStamps): across channels, and across replicas, the call
   * that waited longest goes first.
   */
  queuedAt: number;
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

/**
 * The instants at which a gate queues its calls, each later than the one before by at least
 * a microsecond: calls queued in one millisecond keep their order, and stamps of different
 * replicas compare by when their calls were queued.
 */
export class ArrivalStamps {
  private last = Number.NEGATIVE_INFINITY;

  next(now: number): number {
    this.last = Math.max(now, this.last + 0.001);
    return this.last;
  }
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
  private readonly bucket: Allowance;
  protected lastActivity: number;

  /**
   * @param bucket the channel's pace: default a token bucket of `pace` in this process; the
   *   scheduler's `allowance()` gives one kept where the workspaces' budgets are
   */
  constructor(
    pace: { perMinute: number; burst: number },
    now: number,
    bucket: Allowance = new TokenBucket(pace.perMinute, pace.burst),
  ) {
    this.bucket = bucket;
    this.lastActivity = now;
  }

  readyAt(now: number): number | undefined {
    if (this.queue.length === 0) return undefined;
    // Kept in a database, the pace's take is asked for now, so that `take` finds it in hand.
    this.bucket.ask?.(now);
    return this.bucket.readyAt(now);
  }

  take(now: number): boolean {
    return this.bucket.tryTake(now);
  }

  /** A call will be queued within two seconds: its pace is taken ahead (Allowance.expect). */
  expect(now: number): void {
    this.bucket.expect?.(now);
  }

  pauseUntil(until: number): void {
    this.bucket.pauseUntil?.(until);
  }

  rank(): number {
    return (this.queue[0] as Q).queuedAt;
  }

  expired(now: number): boolean {
    return this.queue.length === 0 && now - this.lastActivity >= IDLE_CHANNEL_MS;
  }

  /** The call at the head, whose token `take` took. */
  protected begin(): Q {
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
