import { type Clock, systemClock } from "../../time.js";
import {
  type BudgetKind,
  BudgetLane,
  type BudgetLaneSnapshot,
  type LaneTicket,
  type QueuePosition,
} from "./budget-lane.js";
import { localSlotWindows, type SlotWindows } from "./slot-window.js";

// Part of the budget's interface, defined beside the lane that keeps them (no import cycle).
export type { BudgetKind, BudgetLaneSnapshot, QueuePosition };

/**
 * The service's rate limits (interface §8) as a client-side scheduler: callers take a
 * ticket, wait until it is ready, send, and release it when the response (or failure)
 * is in. Every caller of the client shares one ServiceBudget, so under any load the
 * client never makes the service answer 429.
 */

export interface BudgetOptions {
  /** Run starts per window per user; default 20 (interface §8). */
  runStartsPerMinute?: number;
  /** All other requests per window per user; default 600 (interface §8). */
  requestsPerMinute?: number;
  /** Length of the service's sliding window, ms; default 60_000. */
  windowMs?: number;
  /**
   * Extra time a released slot stays occupied beyond `windowMs`, ms; default 1. It covers a
   * service that counts the window's edges inclusively when our release and its arrival
   * fall in the same millisecond.
   */
  marginMs?: number;
  /** Time and the timers that wake waiting tickets; default the system clock. */
  clock?: Clock;
  /**
   * Where each (user, kind)'s occupied slots are kept; default this process's memory.
   * Replicas pass slots kept in the database they share (budgets/postgres/), so that
   * together they keep each token within the service's limits, and a 429 holds back all.
   */
  windows?: SlotWindows;
}

export interface BudgetTicket {
  /** Resolves when the caller may send; rejects with BudgetCanceled if canceled first. */
  readonly ready: Promise<void>;
  /** How many tickets will be served before this one; 0 when ready. */
  position(): number;
  /** Estimate until ready, ms; 0 when ready. */
  expectedWaitMs(): number;
  /** Called whenever position or expected ready time changes; returns unsubscribe. */
  onChange(listener: (p: QueuePosition) => void): () => void;
  /** Leaves the queue; once ready it behaves like release(). */
  cancel(): void;
  /** The request finished (response received or failed); idempotent. */
  release(): void;
}

export class BudgetCanceled extends Error {
  constructor(message = "Left the service budget queue before being served.") {
    super(message);
    this.name = "BudgetCanceled";
  }
}

export interface TakeOptions {
  /**
   * Fairness key (e.g. the Slack person the call is for): waiting tickets are served
   * round-robin between parties, FIFO within one. Tickets without a party share one.
   */
  party?: string;
  /** Aborting it cancels the ticket (or releases it once ready). */
  signal?: AbortSignal;
}

type Listener = (p: QueuePosition) => void;

class Ticket implements BudgetTicket, LaneTicket {
  readonly ready: Promise<void>;
  state: "waiting" | "ready" | "done" = "waiting";
  /** The last figures reported; the lane compares against it to decide on onChange. */
  last: { position: number; readyAt: number } | undefined;
  private readonly listeners = new Set<Listener>();
  private resolveReady!: () => void;
  private rejectReady!: (error: unknown) => void;
  private detachSignal: (() => void) | undefined;

  constructor(
    private readonly lane: BudgetLane<Ticket>,
    readonly party: string,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    // A caller that cancels without ever awaiting `ready` must not crash the process
    // with an unhandled rejection; callers that do await still see it.
    this.ready.catch(() => {});
  }

  attach(signal: AbortSignal): void {
    const onAbort = () => this.cancel();
    signal.addEventListener("abort", onAbort, { once: true });
    this.detachSignal = () => signal.removeEventListener("abort", onAbort);
  }

  position(): number {
    return this.state === "waiting" ? this.lane.estimate(this).position : 0;
  }

  expectedWaitMs(): number {
    return this.state === "waiting" ? this.lane.estimate(this).expectedWaitMs : 0;
  }

  get listening(): boolean {
    return this.listeners.size > 0;
  }

  onChange(listener: Listener): () => void {
    if (this.state === "done") return () => {};
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  cancel(): void {
    if (this.state === "ready") {
      this.release();
      return;
    }
    if (this.state !== "waiting") return;
    this.finish();
    this.rejectReady(new BudgetCanceled());
    this.lane.leave(this);
  }

  release(): void {
    if (this.state === "waiting") {
      this.cancel();
      return;
    }
    if (this.state !== "ready") return;
    this.finish();
    this.lane.release(this);
  }

  markReady(): void {
    this.state = "ready";
    this.resolveReady();
  }

  notify(p: QueuePosition): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(p);
      } catch {
        // A listener's failure is its own; the queue must keep moving for everyone.
      }
    }
  }

  private finish(): void {
    this.state = "done";
    this.detachSignal?.();
    this.detachSignal = undefined;
    this.listeners.clear();
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative number, got ${value}`);
  }
  return value;
}

export class ServiceBudget {
  private readonly limits: Record<BudgetKind, number>;
  private readonly holdMs: number;
  private readonly clock: Clock;
  private readonly windows: SlotWindows;
  private readonly lanes = new Map<string, BudgetLane<Ticket>>();

  constructor({
    runStartsPerMinute = 20,
    requestsPerMinute = 600,
    windowMs = 60_000,
    marginMs = 1,
    clock = systemClock,
    windows = localSlotWindows,
  }: BudgetOptions = {}) {
    this.limits = {
      run_start: positiveInteger("runStartsPerMinute", runStartsPerMinute),
      request: positiveInteger("requestsPerMinute", requestsPerMinute),
    };
    this.holdMs = positiveInteger("windowMs", windowMs) + nonNegative("marginMs", marginMs);
    this.clock = clock;
    this.windows = windows;
  }

  /**
   * Joins the queue of (user, kind). `user` is the rate-limited principal (one per
   * bearer token); it appears in snapshot(), so pass a non-secret key, not the token.
   */
  take(user: string, kind: BudgetKind, options: TakeOptions = {}): BudgetTicket {
    const lane = this.lane(user, kind);
    const ticket = new Ticket(lane, options.party ?? "");
    const { signal } = options;
    if (signal?.aborted) {
      // Never joins the queue, so the others' positions are not disturbed.
      ticket.cancel();
      return ticket;
    }
    if (signal) ticket.attach(signal);
    lane.join(ticket);
    return ticket;
  }

  /**
   * `count` calls of (user, kind) will take tickets within two seconds, though none does yet:
   * slots kept in a database are taken for them ahead (SlotWindow.expect).
   */
  expect(user: string, kind: BudgetKind, count: number): void {
    if (count > 0) this.lane(user, kind).expect(count);
  }

  /** The service said Retry-After: nobody of (user, kind) goes before `untilMs` (clock time). */
  pauseUntil(user: string, kind: BudgetKind, untilMs: number): void {
    this.lane(user, kind).pauseUntil(untilMs);
  }

  /** Figures per (user, kind) seen so far, for metrics and status. */
  snapshot(): BudgetLaneSnapshot[] {
    return [...this.lanes.values()].map((lane) => lane.snapshot());
  }

  private lane(user: string, kind: BudgetKind): BudgetLane<Ticket> {
    const key = JSON.stringify([user, kind]);
    let lane = this.lanes.get(key);
    if (!lane) {
      const rules = { user, kind, limit: this.limits[kind], holdMs: this.holdMs };
      // Slots kept in a database land after a round trip: the lane then serves again.
      const window = this.windows(rules, () => made.wake(), this.clock);
      const made = new BudgetLane<Ticket>({ ...rules, clock: this.clock, window });
      lane = made;
      this.lanes.set(key, lane);
    }
    return lane;
  }
}
