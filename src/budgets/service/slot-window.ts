import type { Clock } from "../../time.js";

/**
 * The occupied slots of one (user, kind) of the service budget: what the budget's lane
 * (budget-lane.ts) asks before it lets a ticket go, kept in this process's memory or, with
 * several replicas, in the database they share (budgets/postgres/service-slots.ts).
 *
 * A slot is occupied from the moment a ticket becomes ready until `holdMs` after its release:
 * the service counts a request when it arrives, between the two, so a slot freed a hold
 * after release never overlaps the service's window.
 */

/** Which of the service's limits a lane keeps. */
export type BudgetKind = "run_start" | "request";

/** How the slots stand at an instant. */
export interface SlotView {
  /** Slots taken and not yet released (with shared slots: by any replica). */
  held: number;
  /** When each released slot frees, ascending, all after the instant viewed. */
  freeAt: number[];
  /** No slot is taken before then (the service's Retry-After). */
  pausedUntil: number;
  /**
   * When to look again although nothing happened in this process: slots held by other
   * replicas free without telling it. Infinity when only this process's releases free slots.
   */
  lookAgainAt: number;
}

export interface SlotWindow {
  /**
   * Takes a slot at `now` if fewer than the limit are occupied and no pause holds: its id.
   * `wanted`: how many tickets wait, this one included (default 1); slots kept in a database
   * are taken that many at once, for the calls that follow.
   */
  occupy(now: number, wanted?: number): number | undefined;
  /**
   * `count` requests will come within two seconds (a turn just accepted: its thread, its
   * question, its run), though none waits yet: slots kept in a database are taken for them
   * ahead (budgets/postgres/ahead.ts), so that each finds its slot in hand rather than a round
   * trip later. Memory needs none.
   */
  expect?(now: number, count: number): void;
  /** The request of slot `id` finished at `now`: the slot frees one hold later. */
  release(id: number, now: number): void;
  /** Nobody takes a slot before `until`. */
  pauseUntil(until: number): void;
  view(now: number): SlotView;
}

export interface SlotRules {
  /** The rate-limited principal: a token's fingerprint (credential.ts), never the token. */
  user: string;
  kind: BudgetKind;
  /** Slots per window. */
  limit: number;
  /** How long a released slot stays occupied, ms (the window plus a margin). */
  holdMs: number;
}

/**
 * Makes the slots of one (user, kind). `changed`: slots kept in a database are taken one round
 * trip ahead (budgets/postgres/ahead.ts), so occupy answers undefined while the take is on its
 * way; `changed` is called when it lands, for the lane to ask again. Memory never calls it.
 * `clock`: the lane's, whose timers let go slots taken ahead that no ticket wanted.
 */
export type SlotWindows = (rules: SlotRules, changed: () => void, clock: Clock) => SlotWindow;

/** Slots in this process's memory: the default, right for one process. */
export const localSlotWindows: SlotWindows = (rules) => new LocalSlotWindow(rules);

class LocalSlotWindow implements SlotWindow {
  private readonly held = new Set<number>();
  /** When each released slot frees, ascending. Never longer than `limit`. */
  private readonly freeAt: number[] = [];
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private nextId = 0;

  constructor(private readonly rules: SlotRules) {}

  occupy(now: number): number | undefined {
    this.forget(now);
    if (now < this.pausedUntil) return undefined;
    if (this.held.size + this.freeAt.length >= this.rules.limit) return undefined;
    const id = this.nextId++;
    this.held.add(id);
    return id;
  }

  release(id: number, now: number): void {
    if (!this.held.delete(id)) return;
    const at = now + this.rules.holdMs;
    // Keep ascending even if the clock stepped back.
    let i = this.freeAt.length;
    while (i > 0 && (this.freeAt[i - 1] ?? 0) > at) i--;
    this.freeAt.splice(i, 0, at);
  }

  pauseUntil(until: number): void {
    if (until > this.pausedUntil) this.pausedUntil = until;
  }

  view(now: number): SlotView {
    return {
      held: this.held.size,
      freeAt: this.freeAt.filter((at) => at > now),
      pausedUntil: this.pausedUntil,
      lookAgainAt: Number.POSITIVE_INFINITY,
    };
  }

  private forget(now: number): void {
    while (this.freeAt.length > 0 && (this.freeAt[0] ?? 0) <= now) this.freeAt.shift();
  }
}
