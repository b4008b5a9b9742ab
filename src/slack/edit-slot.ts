import type { CallFailure } from "./call-failure.js";

/** One Slack message that the bot edits. */
export interface EditTarget {
  team: string;
  channel: string;
  ts: string;
}

/** Why an edit's promise rejected without Slack having said no. */
export class PacerError extends Error {
  constructor(readonly reason: "forgotten" | "closed") {
    super(reason === "closed" ? "the pacer was closed" : "the edit was dropped (forget)");
    this.name = "PacerError";
  }
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A payload to show, with every caller waiting for it (or for an older payload it replaced). */
interface Edit<P> {
  payload: P;
  final: boolean;
  waiters: Waiter[];
  /** When this edit (or the oldest one it replaced) started waiting; finals go oldest first. */
  since: number;
  /** Transient failures of this final so far. */
  failures: number;
}

export interface RetryPolicy {
  /** Retries of a final after transient errors. */
  finalRetries: number;
  /** Base of the exponential backoff, ms. */
  retryDelayMs: number;
}

const MAX_RETRY_DELAY_MS = 30_000;

/**
 * The edits of one message: a single slot with the latest payload (never a queue of stale
 * edits), the edit in flight, and who waits for what. The pacer decides when it goes.
 */
export class EditSlot<P> {
  private pending: Edit<P> | undefined;
  private inFlight: Edit<P> | undefined;
  /** Start of the previous send: the per-message interval and the round-robin order. */
  private lastSentAt = Number.NEGATIVE_INFINITY;
  /** Backoff after a failed final: nothing is sent before then. */
  private notBefore = Number.NEGATIVE_INFINITY;
  /** A final was given: interim edits are ignored from then on. */
  private finalGiven = false;
  /** Callers of interim edits that failed, waiting for a later edit to land. */
  private orphans: Waiter[] = [];
  private lastActivity: number;

  constructor(
    readonly target: EditTarget,
    now: number,
  ) {
    this.lastActivity = now;
  }

  get hasPending(): boolean {
    return this.pending !== undefined;
  }

  get isInFlight(): boolean {
    return this.inFlight !== undefined;
  }

  /** Takes a new payload; false when it was an interim ignored after a final. */
  give(payload: P, final: boolean, waiter: Waiter, now: number): boolean {
    this.lastActivity = now;
    if (!final && this.finalGiven) {
      // Follows the final while that is on its way; after it, there is nothing to wait for.
      const carrier = this.pending?.final
        ? this.pending
        : this.inFlight?.final
          ? this.inFlight
          : undefined;
      if (carrier) carrier.waiters.push(waiter);
      else waiter.resolve();
      return false;
    }
    const waiters = [waiter, ...this.orphans];
    this.orphans = [];
    if (this.pending) {
      this.pending.payload = payload;
      this.pending.waiters.push(...waiters);
      this.pending.failures = 0;
      if (final && !this.pending.final) {
        this.pending.final = true;
        this.pending.since = now;
      }
    } else {
      this.pending = { payload, final, waiters, since: now, failures: 0 };
    }
    if (final) this.finalGiven = true;
    return true;
  }

  /** When the pending edit may go (a final is not held back by the interval), if there is one. */
  readyAt(messageIntervalMs: number): number | undefined {
    if (!this.pending || this.inFlight) return undefined;
    if (this.pending.final) return this.notBefore;
    return Math.max(this.notBefore, this.lastSentAt + messageIntervalMs);
  }

  /** Finals first, oldest first; then interim edits of the least recently edited message. */
  goesBefore(other: EditSlot<P>): boolean {
    const a = this.pending as Edit<P>;
    const b = other.pending as Edit<P>;
    if (a.final !== b.final) return a.final;
    if (!a.final && this.lastSentAt !== other.lastSentAt) return this.lastSentAt < other.lastSentAt;
    return a.since < b.since;
  }

  /** Moves the pending edit in flight; returns what to send. */
  begin(now: number): { payload: P; final: boolean } {
    const edit = this.pending as Edit<P>;
    this.pending = undefined;
    this.inFlight = edit;
    this.lastSentAt = now;
    return edit;
  }

  landed(now: number): void {
    const edit = this.inFlight as Edit<P>;
    this.inFlight = undefined;
    this.lastActivity = now;
    if (edit.final) this.notBefore = Number.NEGATIVE_INFINITY;
    for (const w of edit.waiters) w.resolve();
  }

  /** Re-queues, retries or gives up the edit in flight, as the failure says. */
  failed(failure: CallFailure, error: unknown, now: number, policy: RetryPolicy): void {
    const edit = this.inFlight as Edit<P>;
    this.inFlight = undefined;
    this.lastActivity = now;
    if (this.pending) {
      // A newer payload arrived meanwhile: it carries this edit's callers, whatever went wrong.
      this.pending.waiters.push(...edit.waiters);
      this.pending.since = Math.min(this.pending.since, edit.since);
    } else if (failure.kind === "rate_limited") {
      this.pending = edit;
    } else if (edit.final && failure.kind === "transient" && edit.failures < policy.finalRetries) {
      edit.failures++;
      const delay = policy.retryDelayMs * 2 ** (edit.failures - 1);
      this.notBefore = now + Math.min(delay, MAX_RETRY_DELAY_MS);
      this.pending = edit;
    } else if (edit.final) {
      rejectAll([...edit.waiters, ...this.orphans], error);
      this.orphans = [];
    } else {
      // Interim edits are not retried: the next edit carries newer text anyway.
      this.orphans.push(...edit.waiters);
    }
  }

  /** Drops a pending interim edit and the callers of failed ones. */
  forget(): void {
    const dropped = this.orphans;
    this.orphans = [];
    if (this.pending && !this.pending.final) {
      dropped.push(...this.pending.waiters);
      this.pending = undefined;
    }
    rejectAll(dropped, new PacerError("forgotten"));
  }

  /** True (and callers of failed interim edits told) when nothing happened for `retentionMs`. */
  expire(now: number, retentionMs: number): boolean {
    if (this.pending || this.inFlight || now - this.lastActivity < retentionMs) return false;
    rejectAll(this.orphans, new PacerError("forgotten"));
    this.orphans = [];
    return true;
  }

  /** Rejects everything not in flight; an edit in flight still settles. */
  close(error: PacerError): void {
    rejectAll([...(this.pending?.waiters ?? []), ...this.orphans], error);
    this.pending = undefined;
    this.orphans = [];
  }

  /** After close: whatever comes back, the callers learn of it. */
  settleClosed(error: unknown): void {
    const edit = this.inFlight as Edit<P>;
    this.inFlight = undefined;
    rejectAll(edit.waiters, error);
  }
}

function rejectAll(waiters: Waiter[], error: unknown): void {
  for (const w of waiters) w.reject(error);
}
