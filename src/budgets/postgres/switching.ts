import type { Allowance, AllowanceRules, QueuePlace } from "../allowance.js";
import {
  LocalSlotWindow,
  type SlotRules,
  type SlotView,
  type SlotWindow,
} from "../service/slot-window.js";
import { SlidingWindow } from "../sliding-window.js";
import { TokenBucket } from "../token-bucket.js";
import { SLACK_MINUTE_MS } from "../window.js";
import type { Spent } from "./handover.js";
import type { SoloLock, SoloMember } from "./solo.js";

/**
 * While the budgets switch between memory and the tables (solo.ts), nothing is taken; whoever
 * waits is told to look again this much later, ms, and is woken as soon as the switch is done.
 */
const SWITCHING_MS = 250;

/**
 * A Slack budget (a method's in a workspace, or a lane's) kept where the lone-replica lock
 * says: in memory while this replica is alone, seeded from the tables, with no statement per
 * take; in the tables (bucket.ts, window.ts) while replicas share them; neither while they
 * switch. Whoever spends it sees one Allowance throughout.
 */
export class SwitchingAllowance implements Allowance, SoloMember {
  private epoch = -1;
  private keeper: Allowance | undefined;
  /** The keeper while solo: what is handed to the tables when another replica comes. */
  private local: TokenBucket | SlidingWindow | undefined;
  /** While solo: a 429's pause (the tables' or one met since), handed over with the rest. */
  private pausedUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly solo: SoloLock,
    private readonly key: string,
    private readonly rules: AllowanceRules,
    private readonly shared: () => Allowance,
    private readonly wake: () => void,
  ) {
    solo.join(this);
  }

  readyAt(now: number, ahead = 0): number {
    const keeper = this.current();
    if (!keeper) return now + SWITCHING_MS;
    const at = keeper.readyAt(now, ahead);
    return keeper === this.local ? Math.max(at, this.pausedUntil) : at;
  }

  tryTake(now: number, place?: QueuePlace): boolean {
    const keeper = this.current();
    if (!keeper || (keeper === this.local && now < this.pausedUntil)) return false;
    return keeper.tryTake(now, place);
  }

  async takeNow(now: number): Promise<boolean> {
    await this.solo.ready();
    const keeper = this.current();
    if (!keeper) return false;
    if (keeper === this.local) return this.tryTake(now);
    return keeper.takeNow ? keeper.takeNow(now) : keeper.tryTake(now);
  }

  ask(now: number, count?: number): void {
    this.sharedKeeper()?.ask?.(now, count);
  }

  expect(now: number): void {
    this.sharedKeeper()?.expect?.(now);
  }

  pauseUntil(until: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, until);
    this.sharedKeeper()?.pauseUntil?.(until);
  }

  withdraw(): void {
    this.sharedKeeper()?.withdraw?.();
  }

  changed(): void {
    this.wake();
  }

  spent(now: number): Spent | undefined {
    const local = this.epoch === this.solo.epoch ? this.local : undefined;
    if (!local) return undefined;
    const spent: Spent = { key: this.key, untilAt: [] };
    if (local instanceof TokenBucket) {
      if (local.state > now) spent.arrival = local.state;
    } else spent.untilAt = local.recent(now).map((at) => at + SLACK_MINUTE_MS);
    if (this.pausedUntil > now) spent.pausedUntil = this.pausedUntil;
    return spent;
  }

  /** Once what its keeper asked of the database has landed (for tests). */
  async settled(): Promise<void> {
    await (this.keeper as { settled?: () => Promise<void> } | undefined)?.settled?.();
  }

  idle(): boolean {
    // What a Slack budget took of the tables counts there by itself (a slot taken ahead for a
    // short while, a bucket's arrival): the tables read when going solo say it.
    return true;
  }

  /** The keeper of the mode now, made on first use in each mode; undefined while switching. */
  private current(): Allowance | undefined {
    if (this.epoch !== this.solo.epoch) {
      this.epoch = this.solo.epoch;
      this.keeper = undefined;
      this.local = undefined;
      this.pausedUntil = Number.NEGATIVE_INFINITY;
    }
    if (this.keeper || this.solo.mode === "switching") return this.keeper;
    if (this.solo.mode === "shared") {
      this.keeper = this.shared();
      return this.keeper;
    }
    const seed = this.solo.seed(this.key);
    const { perMinute, burst } = this.rules;
    this.local = this.rules.window
      ? new SlidingWindow(
          perMinute,
          SLACK_MINUTE_MS,
          seed.untilAt.map((at) => at - SLACK_MINUTE_MS),
        )
      : new TokenBucket(perMinute, burst, seed.arrival);
    this.pausedUntil = seed.pausedUntil;
    this.keeper = this.local;
    return this.keeper;
  }

  private sharedKeeper(): Allowance | undefined {
    const keeper = this.current();
    return keeper === this.local ? undefined : keeper;
  }
}

/** A slot this window gave out: whose it is now. */
type Given =
  /** A keeper's slot, `inner` its id there (released there, whatever the mode is by then). */
  | { keeper: SlotWindow; inner: number }
  /** A slot held in memory when another replica came, written held: its row's id. */
  | { row: number }
  /** Such a slot while its row is being written; `releaseAt`: released meanwhile, at that. */
  | { carrying: true; releaseAt?: number };

/**
 * The service budget's slots of one (token, kind), kept as SwitchingAllowance keeps Slack's:
 * in memory while alone (service/slot-window.ts), in the tables otherwise
 * (service-slots.ts). Slots held by requests on their way when another replica comes are
 * written held, and released there when their requests end. The lock goes solo only while
 * none of this window's slots is held or in hand (`idle`), so none is left behind.
 */
export class SwitchingSlotWindow implements SlotWindow, SoloMember {
  private epoch = -1;
  private keeper: SlotWindow | undefined;
  private local: LocalSlotWindow | undefined;
  private shared: (SlotWindow & { idle(now: number): boolean }) | undefined;
  private readonly given = new Map<number, Given>();
  private nextId = 1;

  constructor(
    private readonly solo: SoloLock,
    private readonly key: string,
    private readonly rules: SlotRules,
    private readonly makeShared: () => SlotWindow & { idle(now: number): boolean },
    /** Releases a slot held in the tables: its row's id, and until when it counts then. */
    private readonly releaseRow: (id: number, untilAt: number) => void,
    /** How long a slot written held counts, unless released, ms. */
    private readonly leaseMs: number,
    private readonly wake: () => void,
  ) {
    solo.join(this);
  }

  occupy(now: number, wanted?: number): number | undefined {
    const keeper = this.current();
    const inner = keeper?.occupy(now, wanted);
    if (!keeper || inner === undefined) return undefined;
    const id = this.nextId++;
    this.given.set(id, { keeper, inner });
    return id;
  }

  expect(now: number, count: number): void {
    const keeper = this.current();
    if (keeper === this.shared) keeper?.expect?.(now, count);
  }

  release(id: number, now: number): void {
    const given = this.given.get(id);
    if (!given) return;
    if ("carrying" in given) {
      given.releaseAt = now;
      return;
    }
    this.given.delete(id);
    if ("row" in given) this.releaseRow(given.row, now + this.rules.holdMs);
    else given.keeper.release(given.inner, now);
  }

  pauseUntil(until: number): void {
    this.current()?.pauseUntil(until);
  }

  view(now: number): SlotView {
    const keeper = this.current();
    if (keeper) return keeper.view(now);
    const later = now + SWITCHING_MS;
    return { held: this.rules.limit, freeAt: [], pausedUntil: later, lookAgainAt: later };
  }

  changed(): void {
    this.wake();
  }

  spent(now: number): Spent | undefined {
    const local = this.epoch === this.solo.epoch ? this.local : undefined;
    if (!local) return undefined;
    const view = local.view(now);
    const held = new Set(local.heldIds());
    const carried = [...this.given].filter(
      ([, given]) => "inner" in given && given.keeper === local && held.has(given.inner),
    );
    for (const [id] of carried) this.given.set(id, { carrying: true });
    return {
      key: this.key,
      untilAt: view.freeAt,
      held: {
        count: carried.length,
        untilAt: now + this.leaseMs + this.rules.holdMs,
        carried: (rows) => {
          for (const [i, [id]] of carried.entries()) this.carried(id, rows?.[i]);
        },
      },
      ...(view.pausedUntil > now && { pausedUntil: view.pausedUntil }),
    };
  }

  /** Once what its keeper asked of the database has landed (for tests). */
  async settled(): Promise<void> {
    await (this.keeper as { settled?: () => Promise<void> } | undefined)?.settled?.();
  }

  /**
   * The row of the slot `id` carried into the tables: kept for its release, or released now
   * if its request ended meanwhile.
   */
  private carried(id: number, row: number | undefined): void {
    const given = this.given.get(id);
    if (!given || !("carrying" in given) || row === undefined) return;
    if (given.releaseAt === undefined) this.given.set(id, { row });
    else {
      this.given.delete(id);
      this.releaseRow(row, given.releaseAt + this.rules.holdMs);
    }
  }

  idle(now: number): boolean {
    return this.given.size === 0 && (this.shared?.idle(now) ?? true);
  }

  private current(): SlotWindow | undefined {
    if (this.epoch !== this.solo.epoch) {
      this.epoch = this.solo.epoch;
      this.keeper = undefined;
      this.local = undefined;
      this.shared = undefined;
    }
    if (this.keeper || this.solo.mode === "switching") return this.keeper;
    if (this.solo.mode === "shared") {
      this.shared = this.makeShared();
      this.keeper = this.shared;
      return this.keeper;
    }
    const seed = this.solo.seed(this.key);
    this.local = new LocalSlotWindow(this.rules, {
      freeAt: seed.untilAt,
      pausedUntil: seed.pausedUntil,
    });
    this.keeper = this.local;
    return this.keeper;
  }
}
