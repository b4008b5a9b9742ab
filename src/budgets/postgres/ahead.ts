import type { BudgetDb } from "./budget-db.js";
import { EarliestTake } from "./earliest.js";

/** What a take asked of the database answered. */
export interface TakeAnswer<T> {
  /** What was taken (slots' ids, or true for a token), one per call it is for; empty: refused. */
  taken: T[];
  /** The earliest instant the next take may succeed, as far as the answer tells. */
  nextAt: number;
}

/**
 * How long takes that landed are kept for the calls that asked for them, ms. Past that, the call
 * went elsewhere: the take is let go (spent, or released by `drop`) rather than spent late, so
 * that calls never go in a burst the database did not allow.
 */
const IN_HAND_MS = 2_000;

/**
 * While a take is on its way, the budget says it is worth asking again this much later, ms:
 * a bound, not a poll. `changed` wakes whoever waits as soon as the take lands (a round trip).
 */
const ASKING_MS = 250;

/**
 * The takes of one budget kept in PostgreSQL, made one round trip ahead of the calls that
 * spend them. Whoever spends the budget (the Slack call scheduler, the service budget's lane)
 * asks synchronously, on every wake; a statement cannot be waited for there without holding
 * the event loop. So a take that finds none in hand asks the database and answers false at
 * once; when the answer lands, `changed` wakes the spender, which asks again and gets one of
 * those in hand. At most one statement is on its way, and it may take several at once, for
 * as many calls as wait (a service lane's requests, the calls a Slack method's window has
 * ready); a refusal teaches the earliest instant worth asking again, before which nothing is
 * asked.
 */
export class TakesAhead<T> {
  private hand: { values: T[]; at: number } | undefined;
  private asking: Promise<void> | undefined;
  private readonly earliest = new EarliestTake();

  constructor(
    private readonly budgets: BudgetDb,
    private readonly changed: () => void,
    /** A take let go unspent (IN_HAND_MS passed, a pause): a held slot is released. */
    private readonly drop: (value: T) => void = () => undefined,
  ) {}

  /** A take in hand, spent; undefined when there is none. */
  spend(now: number): T | undefined {
    const hand = this.held(now);
    const value = hand?.values.shift();
    if (hand?.values.length === 0) this.hand = undefined;
    return value;
  }

  /** Asks the database for a take, unless one is in hand or on its way, or none can be had yet. */
  ask(now: number, statement: () => Promise<TakeAnswer<T>>): void {
    if (this.asking || this.held(now) || this.knownAt(now) !== undefined) return;
    const asked = this.budgets.attempt(now, statement).then((answer) => {
      this.asking = undefined;
      const taken = answer?.taken ?? [];
      if (taken.length > 0) this.hand = { values: [...taken], at: now };
      else this.budgets.refused();
      // A refusal is not asked again in the same ms: behind another replica's call, the token
      // there is goes to that call first, and asking again at once would only spin.
      const floor = taken.length === 0 ? now + 1 : now;
      if (answer) this.earliest.learnt(Math.max(answer.nextAt, floor));
      this.changed();
    });
    this.asking = asked;
  }

  /**
   * The earliest instant a take may succeed: now with one in hand, a moment later while one
   * is on its way, the instant the database last taught, or when an outage allows asking again.
   * Undefined: nothing is known, worth asking now.
   */
  knownAt(now: number): number | undefined {
    if (this.held(now)) return now;
    if (this.asking) return now + ASKING_MS;
    if (this.budgets.down(now)) return this.budgets.retryAt(now);
    return this.earliest.ahead(now);
  }

  /**
   * Whether the database is not answering at `now`: a statement failed (its time limit
   * passed, the server refused) less than `retryMs` ago. A take in hand is spent first. A take
   * that is only slow is waited for: going by this replica's own copy then would let replicas
   * together spend more than the budget whenever the database is busy.
   */
  stalled(now: number): boolean {
    return !this.held(now) && this.budgets.down(now);
  }

  /**
   * The earliest instant a take may succeed as the database last taught it (a refusal, a
   * reading, a 429), while that is still ahead of `now`; undefined: worth asking.
   */
  notBefore(now: number): number | undefined {
    return this.earliest.ahead(now);
  }

  /** What the database taught of the earliest next take (a reading, a 429). */
  learnt(at: number): void {
    this.earliest.learnt(at);
  }

  /** A 429 said nothing goes before `until`: the takes in hand are let go. */
  pause(until: number): void {
    this.earliest.learnt(until);
    this.unspent();
  }

  /** Whoever was woken for the takes in hand did not spend them all: the rest are let go now. */
  unspent(): void {
    const hand = this.hand;
    this.hand = undefined;
    for (const value of hand?.values ?? []) this.drop(value);
  }

  /** Once the take on its way (if any) has landed. */
  async settled(): Promise<void> {
    await this.asking;
  }

  private held(now: number): { values: T[]; at: number } | undefined {
    const hand = this.hand;
    if (hand && now - hand.at > IN_HAND_MS) {
      this.unspent();
      return undefined;
    }
    return hand;
  }
}
