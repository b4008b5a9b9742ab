import type { CallFailure } from "../web-api/call-failure.js";
import type { Lane } from "./lane.js";
import type { CallScheduler, Lanes } from "./scheduler.js";

/**
 * Slack refusals that say the method cannot work in this workspace at all (a scope the app
 * lacks, a feature the plan does not have): calling again for another thread is no use.
 */
const WORKSPACE_WIDE = new Set([
  "missing_scope",
  "not_allowed_token_type",
  "unknown_method",
  "method_deprecated",
  "not_allowed",
  "feature_not_enabled",
  "team_not_allowed",
]);

export interface ThreadSignalsOptions<P> {
  /** The scheduler every Slack call of the bot goes through. */
  scheduler: CallScheduler;
  /** The Slack method: its budget is its own, apart from every other method's. */
  method: string;
  /** Makes the call, in the workspace `team`. */
  send: (payload: P, team: string) => Promise<unknown>;
  /** Sustained calls per minute per workspace (> 0). */
  perMinute: number;
  /** Calls a workspace may make back to back (>= 1); unused with `window`. */
  burst: number;
  /** `perMinute` counts the calls of any minute, all at once if need be (MethodBudget.window). */
  window?: boolean;
  /**
   * When Slack stops showing a value by itself (the status line after about two minutes), the
   * value is sent again this long after it landed, ms; undefined: never (the default).
   */
  refreshMs?: (payload: P) => number | undefined;
  /** A key with nothing to send is forgotten this long after its last call, ms; default 600_000. */
  retentionMs?: number;
  /** Retries of a value after a 5xx or a network failure; default 2. */
  retries?: number;
  /** A value Slack refused, or that failed after its retries; `workspaceWide` when no more are sent there. */
  onFailed?: (error: unknown, payload: P, workspaceWide: boolean) => void;
  /** Metrics hook: Slack answered 429. */
  onRateLimited?: (retryAfterMs: number) => void;
}

type Settle = (landed: boolean) => void;

/** What every lane of one policy shares. */
interface LaneRules<P> {
  send: (payload: P, team: string) => Promise<unknown>;
  retentionMs: number;
  retries: number;
  refreshMs: ((payload: P) => number | undefined) | undefined;
}

interface Value<P> {
  payload: P;
  /** The payload as JSON: two equal values are one value. */
  same: string;
  waiters: Settle[];
}

/** The value of one key: the one wanted, the one on its way, the one Slack shows. */
class SignalLane<P> implements Lane {
  wanted: Value<P> | undefined;
  sending: Value<P> | undefined;
  shown: { payload: P; same: string; at: number } | undefined;
  private failures = 0;
  private lastCall: number;

  constructor(
    private readonly team: string,
    private readonly rules: LaneRules<P>,
    private readonly onGiveUp: (error: unknown, value: Value<P>) => void,
    now: number,
  ) {
    this.lastCall = now;
  }

  readyAt(now: number): number | undefined {
    if (this.wanted) return now;
    const refresh = this.shown && this.rules.refreshMs?.(this.shown.payload);
    return this.shown && refresh !== undefined ? this.shown.at + refresh : undefined;
  }

  /** The key called longest ago goes first. */
  rank(): number {
    return this.lastCall;
  }

  start(now: number): Promise<unknown> {
    const { shown } = this;
    // Nothing new wanted: the value shown is due again before Slack drops it.
    this.sending = this.wanted ?? {
      payload: (shown as NonNullable<typeof shown>).payload,
      same: (shown as NonNullable<typeof shown>).same,
      waiters: [],
    };
    this.wanted = undefined;
    this.lastCall = now;
    return this.rules.send(this.sending.payload, this.team);
  }

  landed(_value: unknown, now: number): void {
    const value = this.sending as Value<P>;
    this.sending = undefined;
    this.failures = 0;
    this.shown = { payload: value.payload, same: value.same, at: now };
    this.lastCall = now;
    for (const settle of value.waiters) settle(true);
    // Wanted again while it was on its way (the same value after Slack dropped it): done now.
    if (this.wanted?.same === value.same) this.settleWanted(true);
  }

  failed(failure: CallFailure, error: unknown, now: number): number | undefined {
    const value = this.sending as Value<P>;
    this.sending = undefined;
    this.lastCall = now;
    // A newer value replaces one that failed: only the newest is worth a retry.
    if (this.wanted) {
      this.wanted.waiters.push(...value.waiters);
      return undefined;
    }
    if (failure.kind === "rate_limited") {
      this.wanted = value;
      return undefined;
    }
    if (failure.kind === "transient" && this.failures < this.rules.retries) {
      this.wanted = value;
      return this.failures++;
    }
    this.failures = 0;
    for (const settle of value.waiters) settle(false);
    this.onGiveUp(error, value);
    return undefined;
  }

  abandoned(): void {
    for (const settle of this.sending?.waiters ?? []) settle(false);
    this.sending = undefined;
  }

  expired(now: number): boolean {
    if (this.wanted || this.sending) return false;
    const refresh = this.shown && this.rules.refreshMs?.(this.shown.payload);
    return refresh === undefined && now - this.lastCall >= this.rules.retentionMs;
  }

  close(): void {
    this.settleWanted(false);
  }

  settleWanted(landed: boolean): void {
    for (const settle of this.wanted?.waiters ?? []) settle(landed);
    this.wanted = undefined;
  }
}

/**
 * A scheduler policy for a call that sets something Slack shows with a thread or a channel
 * (the status line, the agent session's state and title, the suggested prompts): only the
 * newest value of a key matters. Per key it keeps the value wanted, the one on its way and
 * the one Slack shows; it sends the newest when the method's own budget allows, one call at
 * a time, never a value Slack already shows, and again before Slack drops one by itself.
 * A refusal that concerns the whole workspace (a missing scope, a feature not enabled)
 * stops the calls there: these signals are a courtesy, never worth a call per answer.
 */
export class ThreadSignals<P> {
  private readonly lanes: Lanes<SignalLane<P>>;
  private readonly rules: LaneRules<P>;
  /** Workspaces where Slack refused the method itself. */
  private readonly refused = new Set<string>();

  constructor(private readonly options: ThreadSignalsOptions<P>) {
    this.rules = {
      send: options.send,
      retentionMs: options.retentionMs ?? 600_000,
      retries: options.retries ?? 2,
      refreshMs: options.refreshMs,
    };
    const onRateLimited = options.onRateLimited;
    this.lanes = options.scheduler.register<SignalLane<P>>(options.method, {
      perMinute: options.perMinute,
      burst: options.burst,
      ...(options.window && { window: true }),
      ...(onRateLimited && { onRateLimited: (_lane, ms) => onRateLimited(ms) }),
    });
  }

  /**
   * Wants `payload` shown for `key` of workspace `team`. Resolves true once it (or a newer
   * value of the key) landed, false when it was given up; never rejects.
   */
  set(team: string, key: string, payload: P): Promise<boolean> {
    if (this.lanes.closed || this.refused.has(team)) return Promise.resolve(false);
    const lane = this.lane(team, key);
    const same = JSON.stringify(payload);
    return new Promise<boolean>((settle) => {
      const pending = lane.wanted ?? lane.sending;
      if (pending === undefined && lane.shown?.same === same) return settle(true);
      if (lane.wanted === undefined && lane.sending?.same === same) {
        lane.sending.waiters.push(settle);
        return;
      }
      const waiters = [...(lane.wanted?.waiters ?? []), settle];
      lane.wanted = { payload, same, waiters };
      this.lanes.wake(team, key);
    });
  }

  /**
   * Slack no longer shows the value of `key` (a reply in the thread clears its status line):
   * a value still waiting to be sent is dropped (nobody would see it: its callers learn it did
   * not land), and the one Slack showed is no longer refreshed. True when a value was already
   * on its way: it may land after the clear, and Slack then shows it again.
   */
  cleared(team: string, key: string): boolean {
    const lane = this.lanes.find(team, key);
    if (!lane) return false;
    lane.shown = undefined;
    lane.settleWanted(false);
    return lane.sending !== undefined;
  }

  close(): void {
    this.lanes.close();
  }

  private lane(team: string, key: string): SignalLane<P> {
    const now = this.options.scheduler.clock.now();
    return this.lanes.get(
      team,
      key,
      () =>
        new SignalLane<P>(
          team,
          this.rules,
          (error, value) => this.gaveUp(team, error, value.payload),
          now,
        ),
    );
  }

  private gaveUp(team: string, error: unknown, payload: P): void {
    const reason = (error as { data?: { error?: unknown } } | undefined)?.data?.error;
    const workspaceWide = typeof reason === "string" && WORKSPACE_WIDE.has(reason);
    if (workspaceWide) this.refused.add(team);
    try {
      this.options.onFailed?.(error, payload, workspaceWide);
    } catch {
      // A failing log hook must not break the lane.
    }
  }
}
