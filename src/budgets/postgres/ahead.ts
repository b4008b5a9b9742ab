import type { BudgetDb } from "./budget-db.js";
import { EarliestTake } from "./earliest.js";

/** What a take asked of the database answered. */
export interface TakeAnswer<T> {
  /** What was taken (a slot's id, or true for a token); undefined: refused. */
  taken: T | undefined;
  /** The earliest instant the next take may succeed, as far as the answer tells. */
  nextAt: number;
}

/**
 * How long a take that landed is kept for the call that asked for it, ms. Past that, the call
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
 * The takes of one budget kept in PostgreSQL, made one round trip ahead of the call that
 * spends them. Whoever spends the budget (the Slack call scheduler, the service budget's lane)
 * asks synchronously, on every wake; a statement cannot be waited for there without holding
 * the event loop. So a take that finds none in hand asks the database for one and answers
 * false at once; when the answer lands, `changed` wakes the spender, which asks again and
 * gets the one in hand. At most one take is on its way; a refusal teaches the earliest
 * instant worth asking again, before which nothing is asked.
 */
export class TakesAhead<T> {
  private hand: { value: T; at: number } | undefined;
  private asking: Promise<void> | undefined;
  private readonly earliest = new EarliestTake();

  constructor(
    private readonly budgets: BudgetDb,
    private readonly changed: () => void,
    /** A take let go unspent (IN_HAND_MS passed, a pause): a held slot is released. */
    private readonly drop: (value: T) => void = () => undefined,
  ) {}

  /** The take in hand, spent; undefined when there is none. */
  spend(now: number): T | undefined {
    const hand = this.held(now);
    this.hand = undefined;
    return hand?.value;
  }

  /** Asks the database for a take, unless one is in hand or on its way, or none can be had yet. */
  ask(now: number, statement: () => Promise<TakeAnswer<T>>): void {
    if (this.asking || this.held(now) || this.knownAt(now) !== undefined) return;
    const asked = this.budgets.attempt(now, statement).then((answer) => {
      this.asking = undefined;
      if (answer?.taken !== undefined) this.hand = { value: answer.taken, at: now };
      else this.budgets.refused();
      // A refusal is not asked again in the same ms: behind another replica's call, the token
      // there is goes to that call first, and asking again at once would only spin.
      const floor = answer?.taken === undefined ? now + 1 : now;
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

  /** What the database taught of the earliest next take (a reading, a 429). */
  learnt(at: number): void {
    this.earliest.learnt(at);
  }

  /** A 429 said nothing goes before `until`: a take in hand is let go. */
  pause(until: number): void {
    this.earliest.learnt(until);
    const hand = this.hand;
    this.hand = undefined;
    if (hand) this.drop(hand.value);
  }

  /** Whoever was woken for the take in hand did not spend it: it is let go now. */
  unspent(): void {
    const hand = this.hand;
    this.hand = undefined;
    if (hand) this.drop(hand.value);
  }

  /** Once the take on its way (if any) has landed. */
  async settled(): Promise<void> {
    await this.asking;
  }

  private held(now: number): { value: T; at: number } | undefined {
    const hand = this.hand;
    if (hand && now - hand.at > IN_HAND_MS) {
      this.hand = undefined;
      this.drop(hand.value);
      return undefined;
    }
    return hand;
  }
}
