import type { Clock } from "../../time.js";
import type { BudgetKind, SlotWindow } from "./slot-window.js";

export type { BudgetKind } from "./slot-window.js";

/**
 * One (user, kind) of the service budget: the queue of tickets waiting for a slot, served
 * from the occupied slots kept by a SlotWindow (slot-window.ts: in this process, or shared by
 * replicas), and the estimates of each waiting ticket's turn.
 *
 * A slot is occupied from the moment a ticket becomes ready until `holdMs` after its
 * release. The service counts a request when it arrives, which is between our ready
 * and our release, so a slot freed a whole window after release can never overlap the
 * service's window: the client cannot cause a 429, however the requests are timed.
 */

export interface QueuePosition {
  /** How many tickets will be served before this one; 0 when ready or next. */
  position: number;
  /** Estimate until ready, ms (0 when ready). A lower bound: it assumes instant requests. */
  expectedWaitMs: number;
}

export interface BudgetLaneSnapshot {
  user: string;
  kind: BudgetKind;
  /** Tickets waiting. */
  queued: number;
  /** Tickets ready and not yet released. */
  inFlight: number;
  /** Slots occupied now: in flight plus released within the window. */
  usedInWindow: number;
}

/** What the lane needs of a ticket (the budget's Ticket class implements it). */
export interface LaneTicket {
  readonly party: string;
  /** The last figures reported: position and the absolute expected ready time. */
  last: { position: number; readyAt: number } | undefined;
  /** Someone is told of its figures (BudgetTicket.onChange). */
  readonly listening: boolean;
  markReady(): void;
  notify(p: QueuePosition): void;
}

export interface LaneOptions {
  user: string;
  kind: BudgetKind;
  /** Slots per window. */
  limit: number;
  /** How long a released slot stays occupied, ms (the window plus a margin). */
  holdMs: number;
  /** Time, and the timer that wakes the queue when a slot frees or a pause ends. */
  clock: Clock;
  /** The occupied slots, and the pause (slot-window.ts). */
  window: SlotWindow;
}

export class BudgetLane<T extends LaneTicket> {
  /** Waiting tickets per party, FIFO. */
  private readonly queues = new Map<string, T[]>();
  /** Parties with waiting tickets in round-robin order: the first is served next. */
  private readonly ring: string[] = [];
  private waiting = 0;
  /** Tickets ready and not yet released, and the slot each holds. */
  private readonly inFlight = new Map<T, number>();
  /** At most one timer, set to the next instant a waiting ticket could be served. */
  private cancelTimer: (() => void) | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private refreshing = false;
  private dirty = false;

  constructor(private readonly options: LaneOptions) {}

  join(ticket: T): void {
    const queue = this.queues.get(ticket.party);
    if (queue) {
      queue.push(ticket);
    } else {
      this.queues.set(ticket.party, [ticket]);
      // A new party takes its turn after every party already waiting.
      this.ring.push(ticket.party);
    }
    this.waiting++;
    this.refresh();
  }

  /** `count` tickets will join within two seconds (SlotWindow.expect). */
  expect(count: number): void {
    this.options.window.expect?.(this.options.clock.now(), count);
  }

  /** A waiting ticket leaves the queue; the others move up. */
  leave(ticket: T): void {
    const queue = this.queues.get(ticket.party);
    const index = queue?.indexOf(ticket) ?? -1;
    if (!queue || index < 0) return;
    queue.splice(index, 1);
    if (queue.length === 0) this.dropParty(ticket.party);
    this.waiting--;
    this.refresh();
  }

  /** A ready ticket's request finished: its slot frees one hold later. */
  release(ticket: T): void {
    const slot = this.inFlight.get(ticket);
    if (slot === undefined) return;
    this.inFlight.delete(ticket);
    this.options.window.release(slot, this.options.clock.now());
    this.refresh();
  }

  /** Something changed that this process was not told of by a call here (a slot landed). */
  wake(): void {
    this.refresh();
  }

  pauseUntil(untilMs: number): void {
    this.options.window.pauseUntil(untilMs);
    this.refresh();
  }

  /** Position and expected wait of a waiting ticket ({0, 0} when not waiting). */
  estimate(ticket: T): QueuePosition {
    const now = this.options.clock.now();
    const found = this.estimates(now).find((e) => e.ticket === ticket);
    return found
      ? { position: found.position, expectedWaitMs: found.expectedWaitMs }
      : { position: 0, expectedWaitMs: 0 };
  }

  snapshot(): BudgetLaneSnapshot {
    const view = this.options.window.view(this.options.clock.now());
    return {
      user: this.options.user,
      kind: this.options.kind,
      queued: this.waiting,
      inFlight: this.inFlight.size,
      usedInWindow: view.held + view.freeAt.length,
    };
  }

  /**
   * Serves what can be served, re-arms the timer and tells listeners what changed.
   * Re-entrant calls (a listener canceling or releasing) only mark the lane dirty: the
   * outer call loops until the state is stable, so nobody is told stale figures last.
   */
  private refresh(): void {
    this.dirty = true;
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      while (this.dirty) {
        this.dirty = false;
        const now = this.options.clock.now();
        const served = this.serve(now);
        this.arm(now);
        this.report(now, served);
      }
    } finally {
      this.refreshing = false;
    }
  }

  private serve(now: number): T[] {
    const served: T[] = [];
    while (this.ring.length > 0) {
      const slot = this.options.window.occupy(now, this.waiting);
      if (slot === undefined) break;
      const ticket = this.dequeue();
      this.inFlight.set(ticket, slot);
      ticket.markReady();
      served.push(ticket);
    }
    return served;
  }

  private dequeue(): T {
    const party = this.ring.shift() as string;
    const queue = this.queues.get(party) as T[];
    const ticket = queue.shift() as T;
    this.waiting--;
    if (queue.length > 0) this.ring.push(party);
    else this.queues.delete(party);
    return ticket;
  }

  private dropParty(party: string): void {
    this.queues.delete(party);
    const at = this.ring.indexOf(party);
    if (at >= 0) this.ring.splice(at, 1);
  }

  private arm(now: number): void {
    let at = Number.POSITIVE_INFINITY;
    if (this.waiting > 0) {
      const view = this.options.window.view(now);
      const occupied = view.held + view.freeAt.length;
      // All slots in flight: only a release can help. This process's release() refreshes; a
      // release elsewhere is looked for at view.lookAgainAt.
      const slotAt =
        occupied < this.options.limit ? now : Math.min(view.freeAt[0] ?? at, view.lookAgainAt);
      at = Math.max(slotAt, view.pausedUntil);
    }
    if (at === this.timerAt) return;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = at;
    if (at === Number.POSITIVE_INFINITY) return;
    // At least 1 ms: a timer that fires early re-arms instead of spinning.
    this.cancelTimer = this.options.clock.timer(Math.max(1, at - now), () => {
      this.cancelTimer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.refresh();
    });
  }

  private report(now: number, served: T[]): void {
    for (const ticket of served) {
      ticket.last = { position: 0, readyAt: now };
      ticket.notify({ position: 0, expectedWaitMs: 0 });
    }
    // The queue is replayed only for someone to tell (a run's start shows its place): replayed
    // on every change for tickets nobody listens to, a burst's queue cost its square.
    if (!this.listened()) return;
    for (const e of this.estimates(now)) {
      if (this.dirty) return;
      const { ticket } = e;
      const readyAt = now + e.expectedWaitMs;
      if (ticket.last?.position === e.position && ticket.last.readyAt === readyAt) continue;
      ticket.last = { position: e.position, readyAt };
      ticket.notify({ position: e.position, expectedWaitMs: e.expectedWaitMs });
    }
  }

  /** Whether any waiting ticket has a listener. */
  private listened(): boolean {
    for (const queue of this.queues.values()) {
      if (queue.some((ticket) => ticket.listening)) return true;
    }
    return false;
  }

  /** Waiting tickets in service order: round-robin over parties, FIFO within each. */
  private order(): T[] {
    const queues = this.ring.map((party) => this.queues.get(party) ?? []);
    const order: T[] = [];
    for (let round = 0, more = true; more; round++) {
      more = false;
      for (const queue of queues) {
        const ticket = queue[round];
        if (ticket) {
          order.push(ticket);
          more = true;
        }
      }
    }
    return order;
  }

  /**
   * Replays the queue against the window log: each waiter takes the earliest slot to
   * free and, assuming its request is instant, frees it again one hold later. Unreleased
   * slots count as freeing one hold from now. A pause holds everyone back until it ends.
   */
  private estimates(now: number): { ticket: T; position: number; expectedWaitMs: number }[] {
    if (this.waiting === 0) return [];
    const { held, freeAt: released, pausedUntil } = this.options.window.view(now);
    const free = this.options.limit - held - released.length;
    // Ascending by construction: now ≤ released ≤ now + hold, and each pushed time is
    // a later start plus the hold.
    const slots: number[] = [
      ...Array<number>(Math.max(0, free)).fill(now),
      ...released,
      ...Array<number>(held).fill(now + this.options.holdMs),
    ];
    let next = 0;
    return this.order().map((ticket, position) => {
      const start = Math.max(slots[next++] ?? now, pausedUntil, now);
      slots.push(start + this.options.holdMs);
      return { ticket, position, expectedWaitMs: Math.ceil(start - now) };
    });
  }
}
