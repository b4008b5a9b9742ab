/**
 * Slack's Web API rate limits as the fake enforces them: a sliding 60 s window per method
 * for the whole workspace, and for `chat.postMessage` additionally a token bucket per
 * channel (Slack allows about one message per second per channel with short bursts).
 */

/** The Web API methods the fake implements. */
export type FakeSlackMethod =
  | "auth.test"
  | "chat.postMessage"
  | "chat.update"
  | "chat.postEphemeral"
  | "chat.delete"
  | "chat.getPermalink"
  | "conversations.replies"
  | "users.info"
  | "views.open"
  | "views.publish"
  | "apps.connections.open"
  | "assistant.threads.setStatus"
  | "assistant.threads.setSuggestedPrompts"
  | "assistant.threads.setTitle"
  | "agents.sessions.setStatus"
  | "agents.sessions.rename"
  | "chat.startStream"
  | "chat.appendStream"
  | "chat.stopStream"
  | "files.info";

/** Calls per minute per method for the workspace. */
export type MethodLimits = Partial<Record<FakeSlackMethod, number>>;

const TIER_2 = 20;
const TIER_3 = 50;
const TIER_4 = 100;

/**
 * Slack's published tiers. `chat.postMessage` has no tier; its 300/min is the workspace
 * ceiling on top of the per-channel bucket.
 */
export const DEFAULT_LIMITS: Readonly<Record<FakeSlackMethod, number>> = {
  "apps.connections.open": TIER_2,
  "chat.update": TIER_3,
  "conversations.replies": TIER_3,
  "users.info": TIER_4,
  "chat.postEphemeral": TIER_4,
  "chat.getPermalink": TIER_4,
  "views.open": TIER_4,
  "views.publish": TIER_4,
  "chat.delete": TIER_4,
  "auth.test": TIER_4,
  "files.info": TIER_4,
  // "Special" limits in Slack's reference; taken as Tier 3 (slack-facts.md).
  "assistant.threads.setStatus": TIER_3,
  "assistant.threads.setSuggestedPrompts": TIER_4,
  "assistant.threads.setTitle": TIER_4,
  // Not published as of this writing (unconfirmed): taken as Tier 3.
  "agents.sessions.setStatus": TIER_3,
  "agents.sessions.rename": TIER_3,
  "chat.startStream": TIER_2,
  "chat.appendStream": TIER_4,
  "chat.stopStream": TIER_2,
  "chat.postMessage": 300,
};

const WINDOW_MS = 60_000;

export type LimitVerdict = { allowed: true } | { allowed: false; retryAfterSec: number };

export interface RateLimitsOptions {
  /** Per-method overrides of {@link DEFAULT_LIMITS}, in calls per minute. */
  limits?: MethodLimits;
  /** Messages a channel may receive at once before the 1/s refill applies. Default 3. */
  postBurst?: number;
  /** Refill of the per-channel post bucket, in messages per second. Default 1. */
  postRefillPerSecond?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Whole seconds until `ms` have passed, never less than 1 (Slack's Retry-After). */
function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function isKnownMethod(method: string): method is FakeSlackMethod {
  return Object.hasOwn(DEFAULT_LIMITS, method);
}

export class RateLimits {
  private readonly limits: Readonly<Record<FakeSlackMethod, number>>;
  private readonly postBurst: number;
  private readonly refillPerMs: number;
  /** Times (ms) of the calls each method was allowed within the last window. */
  private readonly windows = new Map<string, number[]>();
  private readonly buckets = new Map<string, Bucket>();

  constructor({ limits = {}, postBurst = 3, postRefillPerSecond = 1 }: RateLimitsOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.postBurst = postBurst;
    this.refillPerMs = postRefillPerSecond / 1000;
  }

  /** The per-minute limit in force for `method`, or undefined when it is not limited. */
  limitOf(method: string): number | undefined {
    return isKnownMethod(method) ? this.limits[method] : undefined;
  }

  /**
   * Decides one call at time `now` (ms) and, when it is allowed, counts it. Refused calls
   * do not count against the window, as with Slack.
   */
  take(method: string, channel: string | undefined, now: number): LimitVerdict {
    const limit = this.limitOf(method);
    const window = this.windowAt(method, now);
    if (limit !== undefined && window.length >= limit) {
      const oldest = window[0] ?? now;
      return { allowed: false, retryAfterSec: retryAfterSeconds(oldest + WINDOW_MS - now) };
    }
    if (method === "chat.postMessage" && channel !== undefined) {
      const bucket = this.bucketAt(channel, now);
      if (bucket.tokens < 1) {
        return {
          allowed: false,
          retryAfterSec: retryAfterSeconds((1 - bucket.tokens) / this.refillPerMs),
        };
      }
      bucket.tokens -= 1;
    }
    window.push(now);
    return { allowed: true };
  }

  /** Calls of `method` counted in the window ending at `now` (ms): what its budget has spent. */
  spent(method: string, now: number): number {
    return this.windowAt(method, now).length;
  }

  reset(): void {
    this.windows.clear();
    this.buckets.clear();
  }

  private windowAt(method: string, now: number): number[] {
    let window = this.windows.get(method);
    if (window === undefined) {
      window = [];
      this.windows.set(method, window);
    }
    let expired = 0;
    while (expired < window.length && (window[expired] ?? now) <= now - WINDOW_MS) expired += 1;
    if (expired > 0) window.splice(0, expired);
    return window;
  }

  private bucketAt(channel: string, now: number): Bucket {
    let bucket = this.buckets.get(channel);
    if (bucket === undefined) {
      bucket = { tokens: this.postBurst, updatedAt: now };
      this.buckets.set(channel, bucket);
    }
    const elapsed = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(this.postBurst, bucket.tokens + elapsed * this.refillPerMs);
    bucket.updatedAt = now;
    return bucket;
  }
}
