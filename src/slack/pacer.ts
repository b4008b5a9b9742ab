import { Alarm } from "./alarm.js";
import { classifyCallFailure } from "./call-failure.js";
import { EditSlot, type EditTarget, PacerError } from "./edit-slot.js";
import { TokenBucket } from "./token-bucket.js";

export { type EditTarget, PacerError } from "./edit-slot.js";

/** Performs one `chat.update`; throws the Web API client's error when it fails. */
export type EditSender<P> = (target: EditTarget, payload: P) => Promise<void>;

export interface PacerOptions {
  /**
   * Sustained edits per minute per workspace; default 40. Slack's `chat.update` is Tier 3
   * (about 50/min), shared by every reply in the workspace: with the default burst of 4,
   * any 60 s window holds at most burst + updatesPerMinute = 44 edits, below 50.
   */
  updatesPerMinute?: number;
  /** Token-bucket capacity per workspace: edits that may go back to back; default 4. */
  burst?: number;
  /** Least time between a message's interim edits, from one send start, ms; default 1_000. */
  messageIntervalMs?: number;
  /** Retries of a final edit after a non-429 transient error (5xx, network); default 5. */
  finalRetries?: number;
  /** Base of the exponential backoff between those retries, ms; default 1_000 (capped at 30 s). */
  retryDelayMs?: number;
  /**
   * How long a message with nothing to send is remembered (its last send, its final having
   * landed), ms; default 600_000.
   */
  idleRetentionMs?: number;
  /** Clock, ms; default Date.now. Timers are the global setTimeout. */
  now?: () => number;
  /** Metrics hook: Slack answered 429 for this edit; its workspace pauses for retryAfterMs. */
  onRateLimited?: (target: EditTarget, retryAfterMs: number) => void;
  /** Metrics hook: an edit landed. */
  onSent?: (target: EditTarget, final: boolean) => void;
}

type Settings = Required<Omit<PacerOptions, "now" | "onRateLimited" | "onSent">>;
const DEFAULTS: Settings = {
  updatesPerMinute: 40,
  burst: 4,
  messageIntervalMs: 1_000,
  finalRetries: 5,
  retryDelayMs: 1_000,
  idleRetentionMs: 600_000,
};

interface Workspace<P> {
  bucket: TokenBucket;
  /** A 429 stops this workspace's edits until then. */
  pausedUntil: number;
  slots: Map<string, EditSlot<P>>;
  alarm: Alarm;
  pumpQueued: boolean;
}

/**
 * Hands out `chat.update` calls from each workspace's Tier 3 budget.
 *
 * Per workspace a token bucket; per message one slot holding the latest payload, at most one
 * edit in flight, interim edits at most one per `messageIntervalMs`. When a token is free,
 * final edits go first (oldest first), then interim edits of the message least recently
 * edited (so fifty streaming replies take turns). A 429 pauses only its workspace.
 *
 * Promises: an edit resolves when it or a newer edit of the same message lands. A final edit
 * rejects when it fails for good (a permanent Slack error, or transient errors beyond
 * `finalRetries`). An interim edit is never retried: when it fails, its promise waits for the
 * next edit of the message to land, and rejects if that is a final that fails for good, or on
 * `forget()`, `close()` or `idleRetentionMs` without edits (PacerError). Interim edits given
 * after a final are ignored: they follow the final while it is on its way, resolve at once after.
 */
export class Pacer<P> {
  private readonly settings: Settings;
  private readonly now: () => number;
  private readonly workspaces = new Map<string, Workspace<P>>();
  private sent = 0;
  private rateLimited = 0;
  private closed = false;

  constructor(
    private readonly send: EditSender<P>,
    private readonly options: PacerOptions = {},
  ) {
    this.settings = { ...DEFAULTS, ...options };
    this.now = options.now ?? Date.now;
    // Fail at construction, not at the first edit.
    this.newBucket();
  }

  edit(target: EditTarget, payload: P, options?: { final?: boolean }): Promise<void> {
    if (this.closed) return Promise.reject(new PacerError("closed"));
    const ws = this.workspace(target.team);
    const slot = this.slot(ws, target);
    return new Promise<void>((resolve, reject) => {
      const fresh = slot.give(payload, options?.final === true, { resolve, reject }, this.now());
      if (fresh) this.schedule(ws);
    });
  }

  forget(target: EditTarget): void {
    const ws = this.workspaces.get(target.team);
    const slot = ws?.slots.get(keyOf(target));
    if (!ws || !slot) return;
    slot.forget();
    this.schedule(ws);
  }

  stats(): { pending: number; inFlight: number; sent: number; rateLimited: number } {
    let pending = 0;
    let inFlight = 0;
    for (const ws of this.workspaces.values()) {
      for (const slot of ws.slots.values()) {
        if (slot.hasPending) pending++;
        if (slot.isInFlight) inFlight++;
      }
    }
    return { pending, inFlight, sent: this.sent, rateLimited: this.rateLimited };
  }

  close(): void {
    this.closed = true;
    const error = new PacerError("closed");
    for (const ws of this.workspaces.values()) {
      ws.alarm.clear();
      for (const slot of ws.slots.values()) slot.close(error);
    }
  }

  private newBucket(): TokenBucket {
    return new TokenBucket(this.settings.updatesPerMinute, this.settings.burst);
  }

  private workspace(team: string): Workspace<P> {
    let ws = this.workspaces.get(team);
    if (!ws) {
      const created: Workspace<P> = {
        bucket: this.newBucket(),
        pausedUntil: Number.NEGATIVE_INFINITY,
        slots: new Map(),
        alarm: new Alarm(() => this.pump(created), this.now),
        pumpQueued: false,
      };
      ws = created;
      this.workspaces.set(team, ws);
    }
    return ws;
  }

  private slot(ws: Workspace<P>, target: EditTarget): EditSlot<P> {
    const key = keyOf(target);
    let slot = ws.slots.get(key);
    if (!slot) {
      slot = new EditSlot<P>(
        { team: target.team, channel: target.channel, ts: target.ts },
        this.now(),
      );
      ws.slots.set(key, slot);
    }
    return slot;
  }

  /** Pumps once after the current tick, so edits given together are ordered together. */
  private schedule(ws: Workspace<P>): void {
    if (ws.pumpQueued || this.closed) return;
    ws.pumpQueued = true;
    void Promise.resolve().then(() => {
      ws.pumpQueued = false;
      this.pump(ws);
    });
  }

  /** Sends whatever can go now, then sets the workspace's one alarm for the next instant. */
  private pump(ws: Workspace<P>): void {
    if (this.closed) return;
    const now = this.now();
    // Forget messages idle for idleRetentionMs, so a long-running bot does not grow.
    for (const [key, slot] of ws.slots) {
      if (slot.expire(now, this.settings.idleRetentionMs)) ws.slots.delete(key);
    }
    for (;;) {
      if (now < ws.pausedUntil) {
        ws.alarm.set(ws.pausedUntil);
        return;
      }
      let best: EditSlot<P> | undefined;
      let nextReady = Number.POSITIVE_INFINITY;
      for (const slot of ws.slots.values()) {
        const readyAt = slot.readyAt(this.settings.messageIntervalMs);
        if (readyAt === undefined) continue;
        if (readyAt > now) nextReady = Math.min(nextReady, readyAt);
        else if (!best || slot.goesBefore(best)) best = slot;
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
      this.dispatch(ws, best, now);
    }
  }

  private dispatch(ws: Workspace<P>, slot: EditSlot<P>, now: number): void {
    const { payload, final } = slot.begin(now);
    let call: Promise<void>;
    try {
      call = this.send(slot.target, payload);
    } catch (error) {
      call = Promise.reject(error);
    }
    call.then(
      () => {
        slot.landed(this.now());
        this.sent++;
        this.schedule(ws);
        notify(() => this.options.onSent?.(slot.target, final));
      },
      (error: unknown) => this.failed(ws, slot, error),
    );
  }

  private failed(ws: Workspace<P>, slot: EditSlot<P>, error: unknown): void {
    if (this.closed) {
      slot.settleClosed(error);
      return;
    }
    const now = this.now();
    const failure = classifyCallFailure(error);
    if (failure.kind === "rate_limited") {
      this.rateLimited++;
      ws.pausedUntil = Math.max(ws.pausedUntil, now + failure.retryAfterMs);
      notify(() => this.options.onRateLimited?.(slot.target, failure.retryAfterMs));
    }
    slot.failed(failure, error, now, this.settings);
    this.schedule(ws);
  }
}

function keyOf(target: EditTarget): string {
  return `${target.team}\u0000${target.channel}\u0000${target.ts}`;
}

/** Metrics hooks must not break the pacing. */
function notify(hook: () => void): void {
  try {
    hook();
  } catch {
    // A failing metrics hook is not a reason to lose an edit.
  }
}
