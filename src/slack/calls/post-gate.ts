import type { Allowance } from "../../budgets/allowance.js";
import { TokenBucket } from "../../budgets/token-bucket.js";
import type { CallFailure } from "../web-api/call-failure.js";
import { ArrivalStamps, ChannelLane, type Queued, type RetryLimits } from "./channel-lane.js";
import { CallScheduler, type Lanes } from "./scheduler.js";

/** Where a `chat.postMessage` goes. */
export interface PostTarget {
  team: string;
  channel: string;
  /** The queue the call waits in, with its own pace; default the channel. */
  lane?: string;
}

export interface PostGateOptions {
  /**
   * The scheduler the posts go through, shared with the edit pacer; default one of the
   * gate's own, on the system clock.
   */
  scheduler?: CallScheduler;
  /** Posts one channel may make back to back; default 2. */
  burst?: number;
  /** Sustained posts per second per channel (Slack: about 1); default 1. */
  perSecond?: number;
  /** Posts per minute per workspace, all channels together; default 250. */
  workspacePerMinute?: number;
  /** Posts the whole workspace may make back to back; default 10. */
  workspaceBurst?: number;
  /** `workspacePerMinute` counts any 60 s window, with no pace inside it (MethodBudget.window). */
  workspaceWindow?: boolean;
  /** Retries of a post after a transient error (5xx, network); default 5. */
  retries?: number;
  /**
   * Ceiling of the first (jittered, exponential) backoff between those retries, ms; default
   * 1_000 (capped at 30 s).
   */
  retryDelayMs?: number;
  /** 429 answers one post may meet (each waited out) before it fails; default 10. */
  rateLimitRetries?: number;
  /** Metrics hook: Slack answered 429; the channel pauses for retryAfterMs. */
  onRateLimited?: (target: PostTarget, retryAfterMs: number) => void;
  /**
   * The method whose budget the calls spend; default `chat.postMessage`. The stream methods
   * (stream-gate.ts) are gates of the same kind, on their own budgets.
   */
  method?: string;
  /**
   * What a 429 pauses: the lane that met it (default: posts are limited per channel) or
   * every call of the method in the workspace (a tier).
   */
  pauses?: "lane" | "method";
  /**
   * Keep each lane's own pace in this process's memory rather than where the workspaces'
   * budgets are (shared by replicas): for lanes that only the replica writing a message
   * calls (its stream's appends and stop), or whose pace is none of Slack's limits. Default
   * false: Slack limits a channel's posts whichever replica makes them.
   */
  localPace?: boolean;
}

/** Why a post's promise rejected without Slack having said no. */
export class PostGateError extends Error {
  constructor(readonly reason: "closed" | "withdrawn") {
    super(reason === "closed" ? "the post gate was closed" : "the call was withdrawn");
    this.name = "PostGateError";
  }
}

/** Who waits for a queued call to come near the head of its queue (`PostGate.post`). */
export interface Nearing {
  /** Calls ahead of it (the one in flight included) at which it counts as near. */
  within: number;
  /** Called once, when it is near, or at once when the call settles or is withdrawn first. */
  reached: () => void;
}

interface Job extends Queued {
  /** Called once per attempt, with the attempt number (1, 2, …). */
  run: (attempt: number) => Promise<unknown>;
  nearing: Nearing | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  attempts: number;
}

interface ChannelRules extends RetryLimits {
  perMinute: number;
  burst: number;
}

/** The posts of one channel: first in, first out, one call at a time, at its own pace. */
class ChannelQueue extends ChannelLane<Job> {
  inFlight = false;

  constructor(
    readonly target: PostTarget,
    private readonly rules: ChannelRules,
    now: number,
    pace: Allowance,
  ) {
    super(rules, now, pace);
  }

  start(): Promise<unknown> {
    const job = this.begin();
    this.inFlight = true;
    job.attempts++;
    return job.run(job.attempts);
  }

  landed(value: unknown, now: number): void {
    this.finish(now).resolve(value);
  }

  /** Tells each call whose queue has come near that it has. */
  tellNear(): void {
    this.queue.forEach((job, ahead) => {
      if (job.nearing && ahead <= job.nearing.within) reach(job);
    });
  }

  failed(failure: CallFailure, error: unknown, now: number): number | undefined {
    this.inFlight = false;
    // A 429 is waited out by the channel's pause; the post stays at the head meanwhile.
    const next = this.afterFailure(failure, this.rules, now);
    if (next === "wait") return undefined;
    if (next !== "give_up") return next;
    this.finish(now).reject(error);
    return undefined;
  }

  abandoned(error: unknown): void {
    this.finish(this.lastActivity).reject(error);
  }

  /** Takes `job` out of the queue if it has not gone yet; its caller learns it was withdrawn. */
  withdraw(job: Job): void {
    const at = this.queue.indexOf(job);
    if (at === -1 || (at === 0 && this.inFlight) || job.attempts > 0) return;
    this.queue.splice(at, 1);
    reach(job);
    job.reject(new PostGateError("withdrawn"));
    this.tellNear();
  }

  close(): void {
    const error = new PostGateError("closed");
    const waiting = this.inFlight ? this.queue.splice(1) : this.queue.splice(0);
    for (const job of waiting) {
      reach(job);
      job.reject(error);
    }
  }

  private finish(now: number): Job {
    const job = this.queue.shift() as Job;
    this.inFlight = false;
    this.lastActivity = now;
    reach(job);
    this.tellNear();
    return job;
  }
}

/** The key of `target`'s queue: its channel, unless it names a lane. */
function laneOf(target: PostTarget): string {
  return target.lane ?? target.channel;
}

function reach(job: Job): void {
  const nearing = job.nearing;
  job.nearing = undefined;
  nearing?.reached();
}

/**
 * The `chat.postMessage` policy on the call scheduler: per channel first in, first out, one
 * call at a time, at most `perSecond` after a burst of `burst`, and at most
 * `workspacePerMinute` for the workspace (the post that has waited longest goes first). A 429
 * pauses that channel for Retry-After and then repeats the same call; transient errors are
 * retried with backoff.
 *
 * A retry after a network error may repeat a post that Slack did receive: `fn` is given the
 * attempt number so that a caller can look for its earlier message before posting again.
 */
export class PostGate {
  private readonly rules: ChannelRules;
  private readonly scheduler: CallScheduler;
  private readonly channels: Lanes<ChannelQueue>;
  private readonly method: string;
  private readonly localPace: boolean;
  private readonly arrivals = new ArrivalStamps();

  constructor(options: PostGateOptions = {}) {
    this.rules = {
      perMinute: (options.perSecond ?? 1) * 60,
      burst: options.burst ?? 2,
      retries: options.retries ?? 5,
      rateLimitRetries: options.rateLimitRetries ?? 10,
    };
    // Fail at construction, not at the first post.
    new TokenBucket(this.rules.perMinute, this.rules.burst);
    this.scheduler = options.scheduler ?? new CallScheduler();
    const onRateLimited = options.onRateLimited;
    this.method = options.method ?? "chat.postMessage";
    this.localPace = options.localPace ?? false;
    this.channels = this.scheduler.register<ChannelQueue>(this.method, {
      perMinute: options.workspacePerMinute ?? 250,
      burst: options.workspaceBurst ?? 10,
      window: options.workspaceWindow ?? false,
      pauses: options.pauses ?? "lane",
      retryDelayMs: options.retryDelayMs ?? 1_000,
      ...(onRateLimited && { onRateLimited: (c, ms) => onRateLimited(c.target, ms) }),
    });
  }

  /**
   * Queues a call; `signal` withdraws it while it still waits (its promise rejects with a
   * PostGateError "withdrawn"); once it has gone, it settles as Slack answers. `nearing` is
   * told when few enough calls are ahead of it.
   */
  post<T>(
    target: PostTarget,
    fn: (attempt: number) => Promise<T>,
    signal?: AbortSignal,
    nearing?: Nearing,
  ): Promise<T> {
    if (this.channels.closed) return Promise.reject(new PostGateError("closed"));
    if (signal?.aborted) return Promise.reject(new PostGateError("withdrawn"));
    const now = this.scheduler.clock.now();
    const queue = this.lane(target, now);
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        run: fn,
        resolve: resolve as (value: unknown) => void,
        reject,
        queuedAt: this.arrivals.next(now),
        attempts: 0,
        failures: 0,
        rateLimits: 0,
        nearing,
      };
      queue.queue.push(job);
      queue.tellNear();
      signal?.addEventListener("abort", () => queue.withdraw(job), { once: true });
      this.channels.wake(target.team, laneOf(target));
    });
  }

  /**
   * A post to `target` will be queued within two seconds (a reply's first message waits for
   * its first words): the channel's pace and the workspace's budget, kept in a database, take
   * for it ahead, so that it finds them in hand rather than a round trip later.
   */
  expect(target: PostTarget): void {
    if (this.channels.closed) return;
    const now = this.scheduler.clock.now();
    this.scheduler.expect(target.team, this.method);
    this.lane(target, now).expect(now);
  }

  stats(): { queued: number; inFlight: number; posted: number; rateLimited: number } {
    const channels = this.channels.all();
    const { landed, rateLimited } = this.channels.counts();
    return {
      queued: channels.reduce((n, c) => n + c.queue.length - (c.inFlight ? 1 : 0), 0),
      inFlight: channels.filter((c) => c.inFlight).length,
      posted: landed,
      rateLimited,
    };
  }

  /** The queue of `target`'s lane (its channel, unless it names one). */
  private lane(target: PostTarget, now: number): ChannelQueue {
    const { team, channel } = target;
    const lane = laneOf(target);
    return this.channels.get(team, lane, () => {
      const pace = this.localPace
        ? new TokenBucket(this.rules.perMinute, this.rules.burst)
        : this.scheduler.allowance({ team, method: this.method, lane }, this.rules);
      return new ChannelQueue({ team, channel }, this.rules, now, pace);
    });
  }

  /** Queued posts reject (a post already in flight still settles). */
  close(): void {
    this.channels.close();
  }
}
