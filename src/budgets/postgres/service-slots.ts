import type { Clock } from "../../time.js";
import type { SlotRules, SlotView, SlotWindow } from "../service/slot-window.js";
import { IN_HAND_MS, type TakeAnswer, TakesAhead } from "./ahead.js";
import type { BudgetDb } from "./budget-db.js";
import { LastReading } from "./earliest.js";
import { pause } from "./pauses.js";
import { NO_SLOTS, type SlotRows, type SlotTable } from "./slots.js";

export interface SharedSlotOptions {
  /**
   * How long a held slot counts at most, beyond its hold, ms; default 300_000. A replica that
   * dies holding slots never releases them: they free this long after they were taken. Longer
   * than any request waits for its answer (the client's header and body timeouts, 30 s each).
   */
  leaseMs?: number;
  /**
   * While tickets wait for slots that other replicas hold, the lane looks again this often,
   * ms; default 1_000 (a release elsewhere is not told to this process).
   */
  lookAgainMs?: number;
}

/**
 * The service budget's slots of one (token, kind) in `budget_slots`, shared by replicas: a
 * slot is held from its ticket's ready until its release, then counts one hold more (as in
 * memory, slot-window.ts). Taking them is one statement under the key's lock, made one round
 * trip ahead of the tickets (ahead.ts), for as many as wait and as many more as may be held
 * ahead (the limit's average over IN_HAND_MS): a burst from rest finds its next slots in hand
 * after one round trip, instead of growing its takes one round trip at a time, and once half
 * of those in hand are spent the next are asked for.
 * `changed` wakes the lane when a take lands; a slot in hand that no ticket wants within
 * IN_HAND_MS is released. Releases are not waited for, and go together while one is on its
 * way (SlotTable.release). The view is the slots as last read (again in the background when
 * older than SEEN_MS, earliest.ts), with this process's own takes and releases applied at once.
 */
export class PostgresSlotWindow implements SlotWindow {
  /** The slots this process holds, to tell them from those held elsewhere. */
  private readonly mine = new Set<number>();
  private readonly seen: LastReading<SlotRows>;
  private readonly takes: TakesAhead<number>;
  private readonly leaseMs: number;
  private readonly lookAgainMs: number;
  /**
   * Slots taken for no ticket yet at most: as many as the limit allows on average in
   * IN_HAND_MS (none for a limit of fewer than one in that time, such as 20 run starts a
   * minute), so that what one replica holds ahead never keeps the others long.
   */
  private readonly aheadMax: number;
  /**
   * Slots spent since the last take was asked: once as many as are left in hand, the next are
   * asked for.
   */
  private spentSinceAsked = 0;
  /** Cancels the timer that lets the slots in hand go once no ticket wanted them. */
  private cancelLetGo: (() => void) | undefined;

  constructor(
    private readonly budgets: BudgetDb,
    private readonly slots: SlotTable,
    private readonly key: string,
    private readonly rules: SlotRules,
    private readonly clock: Pick<Clock, "now" | "timer">,
    options: SharedSlotOptions = {},
    changed: () => void = () => undefined,
  ) {
    this.leaseMs = options.leaseMs ?? 300_000;
    this.lookAgainMs = options.lookAgainMs ?? 1_000;
    this.aheadMax = Math.floor((rules.limit * IN_HAND_MS) / rules.holdMs);
    this.takes = new TakesAhead(
      budgets,
      () => {
        changed();
        // Those the lane did not want beyond what may be held ahead go now, the rest later.
        this.takes.unspent(this.aheadMax);
        this.letGoLater();
      },
      // Never given to a ticket: it frees at once.
      (id) => this.slots.release(id, 0),
    );
    this.seen = new LastReading(budgets, (now) => slots.read(key, now), NO_SLOTS);
  }

  occupy(now: number, wanted = 1): number | undefined {
    const id = this.takes.spend(now);
    if (id === undefined) {
      this.ask(now, wanted);
      return undefined;
    }
    // The view counts this process's own held slots (`mine`) besides those read.
    this.mine.add(id);
    this.spentSinceAsked += 1;
    // Half of those in hand went: the next are taken now, before tickets wait for them.
    const inHand = this.takes.inHand(now);
    if (inHand <= this.spentSinceAsked) this.askAhead(now, wanted - 1, inHand);
    return id;
  }

  expect(now: number, count: number): void {
    this.takes.expect(now, (wanted) => this.take(now, wanted), count);
  }

  release(id: number, now: number): void {
    if (!this.mine.delete(id)) return;
    const untilAt = now + this.rules.holdMs;
    // As the release will leave the rows: held no more, counting one hold more.
    this.seen.apply((seen) => ({
      ...seen,
      held: seen.held.filter((held) => held !== id),
      freeAt: [...seen.freeAt, untilAt].sort((a, b) => a - b),
    }));
    // Not waited for; lost (an outage), the slot counts until its lease ends.
    this.slots.release(id, untilAt);
  }

  pauseUntil(until: number): void {
    this.seen.forget();
    this.takes.pause(until);
    pause(this.budgets, this.key, until);
  }

  view(now: number): SlotView {
    const rows = this.seen.at(now);
    const elsewhere = rows.held.some((id) => !this.mine.has(id));
    // Nothing is taken before the take on its way lands, or what a refusal or an outage taught.
    const known = this.takes.knownAt(now) ?? Number.NEGATIVE_INFINITY;
    const held = new Set([...rows.held, ...this.mine]);
    return {
      held: held.size,
      freeAt: rows.freeAt.filter((at) => at > now),
      pausedUntil: Math.max(rows.pausedUntil, known > now ? known : Number.NEGATIVE_INFINITY),
      lookAgainAt: elsewhere ? now + this.lookAgainMs : Number.POSITIVE_INFINITY,
    };
  }

  /** Once what was asked of the database (a take, a reading) has landed. */
  async settled(): Promise<void> {
    await Promise.all([this.takes.settled(), this.seen.settled()]);
  }

  /** Asks for `wanted` slots and those taken ahead, unless a take is in hand, on its way or refused. */
  private ask(now: number, wanted: number): void {
    this.takes.ask(now, () => this.take(now, wanted + this.asked(this.aheadMax)));
  }

  /**
   * Asks for the `waiting` tickets that those in hand do not cover, and as many more as make
   * those held ahead up to aheadMax once they land.
   */
  private askAhead(now: number, waiting: number, inHand: number): void {
    const uncovered = Math.max(0, waiting - inHand);
    const ahead = Math.max(0, this.aheadMax - Math.max(0, inHand - waiting));
    if (uncovered + ahead === 0) return;
    this.takes.askAhead(now, () => this.take(now, uncovered + this.asked(ahead)));
  }

  /** `ahead`, as a take is sent: counting what is spent from now on. */
  private asked(ahead: number): number {
    this.spentSinceAsked = 0;
    return ahead;
  }

  /** Slots left in hand once the lane has been served go IN_HAND_MS after they landed. */
  private letGoLater(): void {
    if (this.cancelLetGo || this.takes.inHand(this.clock.now()) === 0) return;
    this.cancelLetGo = this.clock.timer(IN_HAND_MS + 1, () => {
      this.cancelLetGo = undefined;
      this.letGoLater();
    });
  }

  /** Up to `count` held slots, and on a refusal the slots that say when to ask again. */
  private async take(now: number, count: number): Promise<TakeAnswer<number>> {
    const untilAt = now + this.leaseMs + this.rules.holdMs;
    const { limit } = this.rules;
    const { taken, rows } = await this.slots.occupy(this.key, now, {
      limit,
      untilAt,
      held: true,
      count,
    });
    if (!rows) return { taken, nextAt: now };
    this.seen.set(now, rows);
    // Another replica's release is not told here: look again after lookAgainMs at most.
    const frees = Math.min(rows.freeAt[0] ?? Number.POSITIVE_INFINITY, now + this.lookAgainMs);
    return { taken: [], nextAt: Math.max(frees, rows.pausedUntil) };
  }
}
