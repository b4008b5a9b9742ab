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
 * that calls never go in a burst the database did not allow. A call expected (`expect`) is
 * waited for as long.
 */
export const IN_HAND_MS = 2_000;

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
  /** The takes landed and not yet spent, each with when it landed, oldest first. */
  private hand: { value: T; at: number }[] = [];
  private asking: Promise<void> | undefined;
  private readonly earliest = new EarliestTake();
  /** When each call expected and not yet come was told of (`expect`), oldest first. */
  private expected: number[] = [];
  /** The last call expected while a take was on its way: what to ask for it once it lands. */
  private later: { now: number; statement: (count: number) => Promise<TakeAnswer<T>> } | undefined;

  constructor(
    private readonly budgets: BudgetDb,
    private readonly changed: () => void,
    /** A take let go unspent (IN_HAND_MS passed, a pause): a held slot is released. */
    private readonly drop: (value: T) => void = () => undefined,
  ) {}

  /** A take in hand, spent; undefined when there is none. */
  spend(now: number): T | undefined {
    this.expire(now);
    const taken = this.hand.shift();
    // The call it was taken for has come (or another took its place, and that one will ask).
    if (taken) this.expected.shift();
    return taken?.value;
  }

  /**
   * A call will want a take within IN_HAND_MS (a reply's first message, once its first words
   * are written): takes are asked ahead for the calls expected and not covered by those in
   * hand, in one statement, so that the call finds one in hand when it comes. Those expected
   * while a take is on its way are asked for once it lands, at the instant the last of them
   * was expected (each take is ahead of its call anyway). `statement` takes `count` at `now`.
   * `calls`: how many such calls (default 1).
   */
  expect(now: number, statement: (count: number) => Promise<TakeAnswer<T>>, calls = 1): void {
    for (let i = 0; i < calls; i++) this.expected.push(now);
    this.later = { now, statement };
    this.askExpected();
  }

  /** Asks for the calls expected and not covered, unless a take is on its way or refused. */
  private askExpected(): void {
    const later = this.later;
    if (!later || this.asking) return;
    this.later = undefined;
    const { now, statement } = later;
    this.expected = this.expected.filter((at) => now - at < IN_HAND_MS);
    const missing = this.expected.length - this.inHand(now);
    if (missing > 0 && this.notBefore(now) === undefined) {
      this.request(now, () => statement(missing), true);
    }
  }

  /** Asks the database for a take, unless one is in hand or on its way, or none can be had yet. */
  ask(now: number, statement: () => Promise<TakeAnswer<T>>): void {
    if (this.asking || this.inHand(now) > 0 || this.knownAt(now) !== undefined) return;
    this.request(now, statement);
  }

  /**
   * Asks for takes ahead of the calls to come though some are in hand, so that the next calls
   * find theirs in hand too; unless a take is on its way or none can be had yet.
   */
  askAhead(now: number, statement: () => Promise<TakeAnswer<T>>): void {
    if (this.asking || this.budgets.down(now) || this.notBefore(now) !== undefined) return;
    this.request(now, statement, true);
  }

  /** `ahead`: for calls expected, none of which waits yet. */
  private request(now: number, statement: () => Promise<TakeAnswer<T>>, ahead = false): void {
    const asked = this.budgets.attempt(now, statement).then((answer) => {
      this.asking = undefined;
      const taken = answer?.taken ?? [];
      // Those still in hand (taken for calls expected) are kept with the new ones.
      this.expire(now);
      for (const value of taken) this.hand.push({ value, at: now });
      if (taken.length === 0 && !ahead) this.budgets.refused();
      // A refusal is not asked again in the same ms: behind another replica's call, the token
      // there is goes to that call first, and asking again at once would only spin.
      const floor = taken.length === 0 ? now + 1 : now;
      if (answer) this.earliest.learnt(Math.max(answer.nextAt, floor));
      this.askExpected();
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
    if (this.inHand(now) > 0) return now;
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
    return this.inHand(now) === 0 && this.budgets.down(now);
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

  /**
   * Whoever was woken for the takes in hand did not spend them all: all but the `keep` newest
   * are let go now, and those kept for calls expected (`expect`) and not come yet.
   */
  unspent(keep = 0): void {
    const kept = Math.max(keep, this.expected.length);
    const gone = this.hand.splice(0, Math.max(0, this.hand.length - kept));
    for (const { value } of gone) this.drop(value);
  }

  /** Once the take on its way (if any) has landed. */
  async settled(): Promise<void> {
    await this.asking;
  }

  /** How many takes are in hand at `now` (those kept past IN_HAND_MS are let go first). */
  inHand(now: number): number {
    this.expire(now);
    return this.hand.length;
  }

  /** Takes kept past IN_HAND_MS are let go. */
  private expire(now: number): void {
    for (let first = this.hand[0]; first && now - first.at > IN_HAND_MS; first = this.hand[0]) {
      this.hand.shift();
      this.drop(first.value);
    }
  }
}
