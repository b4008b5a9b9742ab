import { Alarm } from "./alarm.js";
import { classifyCallFailure } from "./call-failure.js";
import { TokenBucket } from "./token-bucket.js";

/** Where a `chat.postMessage` goes. */
export interface PostTarget {
  team: string;
  channel: string;
}

export interface PostGateOptions {
  /** Posts one channel may make back to back; default 2. */
  burst?: number;
  /** Sustained posts per second per channel (Slack: about 1); default 1. */
  perSecond?: number;
  /** Posts per minute per workspace, all channels together; default 250. */
  workspacePerMinute?: number;
  /** Posts the whole workspace may make back to back; default 10. */
  workspaceBurst?: number;
  /** Retries of a post after a transient error (5xx, network); default 5. */
  retries?: number;
  /** Base of the exponential backoff between those retries, ms; default 1_000 (capped at 30 s). */
  retryDelayMs?: number;
  /** 429 answers one post may meet (each waited out) before it fails; default 10. */
  rateLimitRetries?: number;
  /** Clock, ms; default Date.now. Timers are the global setTimeout. */
  now?: () => number;
  /** Metrics hook: Slack answered 429; the channel pauses for retryAfterMs. */
  onRateLimited?: (target: PostTarget, retryAfterMs: number) => void;
}

/** Why a post's promise rejected without Slack having said no. */
export class PostGateError extends Error {
  constructor(readonly reason: "closed") {
    super("the post gate was closed");
    this.name = "PostGateError";
  }
}

const MAX_RETRY_DELAY_MS = 30_000;
/** An idle channel is forgotten after this long, ms (its bucket is full again by then). */
const IDLE_CHANNEL_MS = 60_000;

interface Job {
  /** Called once per attempt, with the attempt number (1, 2, …). */
  run: (attempt: number) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  seq: number;
  attempts: number;
  failures: number;
  rateLimits: number;
}

interface Channel {
  target: PostTarget;
  queue: Job[];
  inFlight: boolean;
  bucket: TokenBucket;
  /** A 429 or a retry backoff: this channel posts nothing before then. */
  notBefore: number;
  lastActivity: number;
}

interface Workspace {
  bucket: TokenBucket;
  channels: Map<string, Channel>;
  alarm: Alarm;
  pumpQueued: boolean;
}

/**
 * Serialises `chat.postMessage` per channel: first in, first out, one call at a time, at most
 * `perSecond` per channel after a burst of `burst`, and at most `workspacePerMinute` for the
 * workspace (the channel that has waited longest goes first). A 429 pauses that channel for
 * Retry-After and then repeats the same call; transient errors are retried with backoff.
 *
 * A retry after a network error may repeat a post that Slack did receive: `fn` is given the
 * attempt number so that a caller can look for its earlier message before posting again.
 */
export class PostGate {
  private readonly burst: number;
  private readonly perMinute: number;
  private readonly workspacePerMinute: number;
  private readonly workspaceBurst: number;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly rateLimitRetries: number;
  private readonly now: () => number;
  private readonly workspaces = new Map<string, Workspace>();
  private seq = 0;
  private posted = 0;
  private rateLimited = 0;
  private closed = false;

  constructor(private readonly options: PostGateOptions = {}) {
    this.burst = options.burst ?? 2;
    this.perMinute = (options.perSecond ?? 1) * 60;
    this.workspacePerMinute = options.workspacePerMinute ?? 250;
    this.workspaceBurst = options.workspaceBurst ?? 10;
    this.retries = options.retries ?? 5;
    this.retryDelayMs = options.retryDelayMs ?? 1_000;
    this.rateLimitRetries = options.rateLimitRetries ?? 10;
    this.now = options.now ?? Date.now;
    // Fail at construction, not at the first post.
    new TokenBucket(this.perMinute, this.burst);
    new TokenBucket(this.workspacePerMinute, this.workspaceBurst);
  }

  post<T>(target: PostTarget, fn: (attempt: number) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new PostGateError("closed"));
    const ws = this.workspace(target.team);
    const channel = this.channel(ws, target);
    return new Promise<T>((resolve, reject) => {
      channel.queue.push({
        run: fn,
        resolve: resolve as (value: unknown) => void,
        reject,
        seq: this.seq++,
        attempts: 0,
        failures: 0,
        rateLimits: 0,
      });
      this.schedule(ws);
    });
  }

  stats(): { queued: number; inFlight: number; posted: number; rateLimited: number } {
    let queued = 0;
    let inFlight = 0;
    for (const ws of this.workspaces.values()) {
      for (const c of ws.channels.values()) {
        queued += c.queue.length - (c.inFlight ? 1 : 0);
        if (c.inFlight) inFlight++;
      }
    }
    return { queued, inFlight, posted: this.posted, rateLimited: this.rateLimited };
  }

  /** Clears the timers; queued posts reject (a post already in flight still settles). */
  close(): void {
    this.closed = true;
    const error = new PostGateError("closed");
    for (const ws of this.workspaces.values()) {
      ws.alarm.clear();
      for (const c of ws.channels.values()) {
        const waiting = c.inFlight ? c.queue.splice(1) : c.queue.splice(0);
        for (const job of waiting) job.reject(error);
      }
    }
  }

  private workspace(team: string): Workspace {
    let ws = this.workspaces.get(team);
    if (!ws) {
      const created: Workspace = {
        bucket: new TokenBucket(this.workspacePerMinute, this.workspaceBurst),
        channels: new Map(),
        alarm: new Alarm(() => this.pump(created), this.now),
        pumpQueued: false,
      };
      ws = created;
      this.workspaces.set(team, ws);
    }
    return ws;
  }

  private channel(ws: Workspace, target: PostTarget): Channel {
    let c = ws.channels.get(target.channel);
    if (!c) {
      c = {
        target: { team: target.team, channel: target.channel },
        queue: [],
        inFlight: false,
        bucket: new TokenBucket(this.perMinute, this.burst),
        notBefore: Number.NEGATIVE_INFINITY,
        lastActivity: this.now(),
      };
      ws.channels.set(target.channel, c);
    }
    return c;
  }

  private schedule(ws: Workspace): void {
    if (ws.pumpQueued || this.closed) return;
    ws.pumpQueued = true;
    void Promise.resolve().then(() => {
      ws.pumpQueued = false;
      this.pump(ws);
    });
  }

  /** Starts every post that can go now, then arms the workspace's one timer. */
  private pump(ws: Workspace): void {
    if (this.closed) return;
    const now = this.now();
    for (;;) {
      let best: Channel | undefined;
      let nextReady = Number.POSITIVE_INFINITY;
      for (const [key, c] of ws.channels) {
        const head = c.queue[0];
        if (!head) {
          if (now - c.lastActivity >= IDLE_CHANNEL_MS) ws.channels.delete(key);
          continue;
        }
        if (c.inFlight) continue;
        const readyAt = Math.max(c.notBefore, c.bucket.readyAt(now));
        if (readyAt > now) nextReady = Math.min(nextReady, readyAt);
        else if (!best || head.seq < (best.queue[0] as Job).seq) best = c;
      }
      if (!best) {
        if (nextReady < Number.POSITIVE_INFINITY) ws.alarm.set(nextReady);
        else ws.alarm.clear();
        return;
      }
      if (!ws.bucket.tryTake(now)) {
        ws.alarm.set(ws.bucket.readyAt(now));
        return;
      }
      best.bucket.tryTake(now);
      this.start(ws, best);
    }
  }

  private start(ws: Workspace, c: Channel): void {
    const job = c.queue[0] as Job;
    c.inFlight = true;
    job.attempts++;
    let call: Promise<unknown>;
    try {
      call = job.run(job.attempts);
    } catch (error) {
      call = Promise.reject(error);
    }
    call.then(
      (value) => {
        this.finish(ws, c);
        this.posted++;
        job.resolve(value);
      },
      (error: unknown) => this.failed(ws, c, job, error),
    );
  }

  private failed(ws: Workspace, c: Channel, job: Job, error: unknown): void {
    const now = this.now();
    const failure = classifyCallFailure(error);
    if (!this.closed && failure.kind === "rate_limited") {
      this.rateLimited++;
      try {
        this.options.onRateLimited?.(c.target, failure.retryAfterMs);
      } catch {
        // A failing metrics hook is not a reason to lose a post.
      }
      if (job.rateLimits++ < this.rateLimitRetries) {
        c.notBefore = Math.max(c.notBefore, now + failure.retryAfterMs);
        this.retry(ws, c);
        return;
      }
    } else if (!this.closed && failure.kind === "transient" && job.failures < this.retries) {
      job.failures++;
      const delay = this.retryDelayMs * 2 ** (job.failures - 1);
      c.notBefore = now + Math.min(delay, MAX_RETRY_DELAY_MS);
      this.retry(ws, c);
      return;
    }
    this.finish(ws, c);
    job.reject(error);
  }

  /** The job stays at the head of its channel's queue: FIFO holds across retries. */
  private retry(ws: Workspace, c: Channel): void {
    c.inFlight = false;
    c.lastActivity = this.now();
    this.schedule(ws);
  }

  private finish(ws: Workspace, c: Channel): void {
    c.queue.shift();
    c.inFlight = false;
    c.lastActivity = this.now();
    this.schedule(ws);
  }
}
