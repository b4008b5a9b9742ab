import type { Allowance } from "../../budgets/allowance.js";
import type { CallFailure } from "../web-api/call-failure.js";
import { type Lane, notify } from "./lane.js";

/** One Slack message that the bot edits. */
export interface EditTarget {
  team: string;
  channel: string;
  ts: string;
}

/** Performs one `chat.update`; throws the Web API client's error when it fails. */
export type EditSender<P> = (target: EditTarget, payload: P) => Promise<void>;

/**
 * What an edit shows: its payload, or what makes the payload when the edit goes (so that only
 * what is sent is ever built, from the newest words then); made undefined, the message shows
 * it already and nothing is sent. A payload is never a function itself.
 */
export type EditPayload<P> = P | (() => P | undefined);

/** Why an edit's promise rejected without Slack having said no. */
export class PacerError extends Error {
  constructor(readonly reason: "forgotten" | "closed") {
    super(reason === "closed" ? "the pacer was closed" : "the edit was dropped (forget)");
    this.name = "PacerError";
  }
}

/** Ranks of one kind of edit lie this far below the next kind's, ms (about 300 years). */
const RANK_TIERS_MS = 1e13;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * What an edit is to a person: `interim` shows words while the answer is written, `final` its
 * last state, and `tidy` a last state that shows nothing they wait for (a streamed answer,
 * whole already, losing its Stop button).
 */
export type EditKind = "interim" | "final" | "tidy";

/** A payload to show, with every caller waiting for it (or for an older payload it replaced). */
interface Edit<P> {
  /** The payload or its maker; once the edit went, what was made (a retry sends it again). */
  payload: EditPayload<P> | undefined;
  final: boolean;
  /** A final that only tidies (EditKind): it goes after every other edit. */
  tidy: boolean;
  waiters: Waiter[];
  /** When this edit (or the oldest one it replaced) started waiting; finals go oldest first. */
  since: number;
  /** Transient failures of this final so far. */
  failures: number;
}

/** What the slots of one pacer share: how an edit is sent, and the pacer's rules. */
export interface SlotRules<P> {
  send: EditSender<P>;
  /** Least time between a message's interim edits, from one send start, ms. */
  messageIntervalMs: number;
  /**
   * The pace of the workspace's interim and tidy edits, apart from the budget they share with
   * finals (pacer.ts); undefined: none of its own.
   */
  interimPace: ((team: string) => Allowance) | undefined;
  /**
   * The instant from which the workspace's budget has room for an interim or tidy edit beyond
   * the finals still to come (Pacer.owe): they never take what an answer's end will need.
   * Undefined: no such room is kept.
   */
  roomAt: ((team: string, now: number) => number) | undefined;
  /** Retries of a final after transient errors. */
  finalRetries: number;
  /** How long a message with nothing to send is remembered, ms. */
  idleRetentionMs: number;
  onSent?: ((target: EditTarget, final: boolean) => void) | undefined;
}

/**
 * The edits of one message: a single slot with the latest payload or its maker (never a queue
 * of stale edits), the edit in flight, and who waits for what. The scheduler decides when it
 * goes; a maker is called then, once.
 */
export class EditSlot<P> implements Lane {
  private pending: Edit<P> | undefined;
  private inFlight: Edit<P> | undefined;
  /** Start of the previous send: the per-message interval and the round-robin order. */
  private lastSentAt = Number.NEGATIVE_INFINITY;
  /** A final was given: interim edits are ignored from then on. */
  private finalGiven = false;
  /** Callers of interim edits that failed, waiting for a later edit to land. */
  private orphans: Waiter[] = [];
  private lastActivity: number;

  constructor(
    readonly target: EditTarget,
    private readonly rules: SlotRules<P>,
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
  give(payload: EditPayload<P>, kind: EditKind, waiter: Waiter, now: number): boolean {
    const final = kind !== "interim";
    const tidy = kind === "tidy";
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
        this.pending.tidy = tidy;
        this.pending.since = now;
      } else if (final) this.pending.tidy &&= tidy;
    } else {
      this.pending = { payload, final, tidy, waiters, since: now, failures: 0 };
    }
    if (final) this.finalGiven = true;
    return true;
  }

  /** When the pending edit may go (a final is not held back by the interval), if there is one. */
  readyAt(now: number): number | undefined {
    const edit = this.pending;
    if (!edit || this.inFlight) return undefined;
    if (edit.final && !edit.tidy) return Number.NEGATIVE_INFINITY;
    const own = edit.final
      ? Number.NEGATIVE_INFINITY
      : this.lastSentAt + this.rules.messageIntervalMs;
    const pace = this.pace();
    // Kept in a database, the pace's take is asked for once the message may go, so that `take`
    // finds it in hand.
    if (own <= now) pace?.ask?.(now);
    const paced = Math.max(pace?.readyAt(now) ?? Number.NEGATIVE_INFINITY, own);
    return Math.max(paced, this.rules.roomAt?.(this.target.team, now) ?? paced);
  }

  /** Takes the interim pace for an interim or tidy edit (a final has none). */
  take(now: number): boolean {
    const edit = this.pending;
    if (edit?.final && !edit.tidy) return true;
    return this.pace()?.tryTake(now) ?? true;
  }

  /** An interim or tidy edit waits for the workspace's interim pace (a final has none). */
  sharesPace(): boolean {
    const edit = this.pending;
    return edit !== undefined && (!edit.final || edit.tidy) && this.pace() !== undefined;
  }

  private pace(): Allowance | undefined {
    return this.rules.interimPace?.(this.target.team);
  }

  /**
   * Finals first, oldest first; then interim edits of messages never edited, oldest first; then
   * those of the least recently edited message (a round robin over the messages); tidy finals
   * last, oldest first.
   */
  rank(): number {
    const edit = this.pending as Edit<P>;
    if (edit.tidy) return edit.since + RANK_TIERS_MS;
    if (edit.final) return edit.since - 2 * RANK_TIERS_MS;
    if (this.lastSentAt === Number.NEGATIVE_INFINITY) return edit.since - RANK_TIERS_MS;
    return this.lastSentAt;
  }

  /**
   * Makes the pending edit's payload, if it is made when it goes, just before the budget is
   * taken for it. One made undefined (nothing new to show) is not sent: its callers are told it
   * landed, no budget is spent on it, and it holds the next edit back no more than if it had
   * never been given.
   */
  prepare(): boolean {
    const edit = this.pending;
    if (!edit) return false;
    edit.payload = made(edit.payload);
    if (edit.payload !== undefined) return true;
    this.pending = undefined;
    for (const w of edit.waiters) w.resolve();
    return false;
  }

  /**
   * Sends the pending edit, made by `prepare` (or now: a budget kept in a database may let it
   * go before saying it has room). One made undefined only now lands at once unsent.
   */
  start(now: number): Promise<void> {
    const edit = this.pending as Edit<P>;
    this.pending = undefined;
    this.inFlight = edit;
    edit.payload = made(edit.payload);
    if (edit.payload === undefined) return Promise.resolve();
    this.lastSentAt = now;
    return this.rules.send(this.target, edit.payload);
  }

  landed(_value: unknown, now: number): void {
    const edit = this.inFlight as Edit<P>;
    this.inFlight = undefined;
    this.lastActivity = now;
    for (const w of edit.waiters) w.resolve();
    if (edit.payload !== undefined) notify(() => this.rules.onSent?.(this.target, edit.final));
  }

  /** Re-queues, retries (returning the retry number) or gives up the edit in flight. */
  failed(failure: CallFailure, error: unknown, now: number): number | undefined {
    const edit = this.inFlight as Edit<P>;
    this.inFlight = undefined;
    this.lastActivity = now;
    if (this.pending) {
      // A newer payload arrived meanwhile: it carries this edit's callers, whatever went wrong.
      this.pending.waiters.push(...edit.waiters);
      this.pending.since = Math.min(this.pending.since, edit.since);
    } else if (failure.kind === "rate_limited") {
      this.pending = edit;
    } else if (
      edit.final &&
      failure.kind === "transient" &&
      edit.failures < this.rules.finalRetries
    ) {
      this.pending = edit;
      return edit.failures++;
    } else if (edit.final) {
      rejectAll([...edit.waiters, ...this.orphans], error);
      this.orphans = [];
    } else {
      // Interim edits are not retried: the next edit carries newer text anyway.
      this.orphans.push(...edit.waiters);
    }
    return undefined;
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

  /** True (and callers of failed interim edits told) when nothing happened for `idleRetentionMs`. */
  expired(now: number): boolean {
    if (this.pending || this.inFlight || now - this.lastActivity < this.rules.idleRetentionMs) {
      return false;
    }
    rejectAll(this.orphans, new PacerError("forgotten"));
    this.orphans = [];
    return true;
  }

  /** Rejects everything not in flight; an edit in flight still settles. */
  close(): void {
    const error = new PacerError("closed");
    rejectAll([...(this.pending?.waiters ?? []), ...this.orphans], error);
    this.pending = undefined;
    this.orphans = [];
  }

  /** After close: whatever comes back, the callers learn of it. */
  abandoned(error: unknown): void {
    const edit = this.inFlight as Edit<P>;
    this.inFlight = undefined;
    rejectAll(edit.waiters, error);
  }
}

/** The payload itself, or what its maker makes of it now. */
function made<P>(payload: EditPayload<P> | undefined): P | undefined {
  return typeof payload === "function" ? (payload as () => P | undefined)() : payload;
}

function rejectAll(waiters: Waiter[], error: unknown): void {
  for (const w of waiters) w.reject(error);
}
