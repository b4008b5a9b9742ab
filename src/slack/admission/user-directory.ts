import { CallSlots, SlotsFull } from "../../budgets/call-slots.js";
import { TokenBucket } from "../../budgets/token-bucket.js";
import { itemParts, markupItems } from "../render/markup.js";

/** What users.info tells of a person, as far as the bot uses it (absent: not said). */
export interface KnownPerson {
  displayName?: string | undefined;
  /** Their own workspace. */
  teamId?: string | undefined;
  /** Their Enterprise org. */
  enterpriseId?: string | undefined;
  /** A restricted or ultra-restricted account. */
  guest?: boolean;
}

/** One users.info call; throws when Slack did not answer it. */
export type UserLookup = (userId: string) => Promise<KnownPerson | undefined>;

export interface UserDirectoryOptions {
  lookup: UserLookup;
  /** How long what Slack said of a person is kept, ms; default 1 hour. */
  ttlMs?: number;
  /** How long a failed lookup is remembered before it is tried again, ms; default 60_000. */
  failureTtlMs?: number;
  /** Most people kept; the oldest entry goes first; default 5_000. */
  maxEntries?: number;
  /** users.info calls in flight at once; default 4. */
  maxConcurrent?: number;
  /** Lookups that may wait for one of those; past it a lookup fails at once; default 100. */
  maxWaiting?: number;
  /** Bounds on lookups made only to show a mentioned person's name (`resolveMentioned`). */
  mentions?: MentionBounds;
  now?: () => number;
}

/**
 * What looking up mentioned people may cost. A mention's name is a nicety (the id is shown
 * without it), while knowing who wrote a message decides who is answered: the names must
 * never take the calls, the queue or the rate that decision needs.
 */
export interface MentionBounds {
  /** People not yet known looked up for one message, at most; default 20. */
  perMessage?: number;
  /** Lookups one writer's messages may cost per minute (as a burst too); default 40. */
  perWriterPerMinute?: number;
  /**
   * Lookups for names per minute in the workspace; default 50, half of users.info's Tier 4
   * (100+ a minute): the rest stays for checking who may ask.
   */
  perMinute?: number;
  /** Of `maxConcurrent`, how many calls names may hold at once; default 2. */
  concurrent?: number;
}

interface Entry {
  /** Undefined: the lookup failed (or Slack knows no such person). */
  person: KnownPerson | undefined;
  expires: number;
}

/** A name lookup that found the person cached by the time its turn came. */
const FOUND = Symbol("found");

/** Writers whose allowance for names is remembered; the oldest is forgotten first. */
const MAX_WRITERS = 1_000;

/**
 * What Slack says of people (names for <@U…> mentions, their organisation, whether they are
 * guests), through a cache so a busy thread costs one users.info call per person per hour.
 * Lookups are bounded: a few in flight at once, a bounded queue behind them, a bounded
 * cache. A failed lookup is not fatal: the caller shows the id, or decides what an unknown
 * person may do.
 *
 * Two kinds of lookup share the calls: `resolve` (who someone is: the rule of who may ask
 * depends on it) and `resolveMentioned` (a mentioned person's name, for display only). The
 * second is bounded per message, per writer and per minute, and holds at most
 * `mentions.concurrent` of the calls, in flight or queued: a lookup of who someone is waits
 * behind no more than those (nor for a name-only lookup of the same person). A message full
 * of mentions then shows some of them as ids, and everyone else is still checked in time.
 */
export class UserDirectory {
  private readonly cache = new Map<string, Entry>();
  /** Lookups in flight, by person: for who they are, and for a name only. */
  private readonly inflight = {
    identity: new Map<string, Promise<void>>(),
    name: new Map<string, Promise<void>>(),
  };
  private readonly slots: CallSlots;
  private readonly nameSlots: CallSlots;
  private readonly nameRate: TokenBucket;
  private readonly writers = new Map<string, TokenBucket>();
  private readonly ttlMs: number;
  private readonly failureTtlMs: number;
  private readonly maxEntries: number;
  private readonly mentions: Required<MentionBounds>;
  private readonly now: () => number;

  constructor(private readonly options: UserDirectoryOptions) {
    this.ttlMs = options.ttlMs ?? 3_600_000;
    this.failureTtlMs = options.failureTtlMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 5_000;
    this.now = options.now ?? Date.now;
    const maxConcurrent = options.maxConcurrent ?? 4;
    this.slots = new CallSlots(maxConcurrent, options.maxWaiting ?? 100);
    const m = options.mentions ?? {};
    this.mentions = {
      perMessage: m.perMessage ?? 20,
      perWriterPerMinute: m.perWriterPerMinute ?? 40,
      perMinute: m.perMinute ?? 50,
      concurrent: Math.min(m.concurrent ?? 2, maxConcurrent),
    };
    // Waiting room for every name the minute's rate lets through: no name is refused here.
    this.nameSlots = new CallSlots(this.mentions.concurrent, this.mentions.perMinute);
    this.nameRate = new TokenBucket(this.mentions.perMinute, this.mentions.perMinute);
  }

  /** The cached name, if known. */
  name(userId: string): string | undefined {
    return this.person(userId)?.displayName;
  }

  /** What Slack said of this person, if a lookup has answered and is still fresh. */
  person(userId: string): KnownPerson | undefined {
    const entry = this.cache.get(userId);
    return entry && entry.expires > this.now() ? entry.person : undefined;
  }

  /**
   * Makes sure these people are cached (best effort; resolves once each lookup ended): for
   * knowing who they are, so never behind a lookup made for a name only.
   */
  async resolve(userIds: Iterable<string>): Promise<void> {
    const work: Promise<void>[] = [];
    for (const id of new Set(userIds)) {
      if (this.fresh(id)) continue;
      work.push(this.start(id, "identity"));
    }
    await Promise.all(work);
  }

  /**
   * Looks up, for their names only, people `writer` mentioned in one message, within the
   * bounds (MentionBounds): people already known or being looked up cost nothing; of the
   * others at most `perMessage` are asked, while the writer's and the workspace's allowance
   * last. The rest keep their ids (`@U…`) where the text shows them. Resolves once the
   * lookups it started ended.
   */
  async resolveMentioned(userIds: Iterable<string>, writer: string): Promise<void> {
    const work: Promise<void>[] = [];
    let asked = 0;
    for (const id of new Set(userIds)) {
      if (this.fresh(id)) continue;
      const pending = this.inflight.identity.get(id) ?? this.inflight.name.get(id);
      if (pending) {
        work.push(pending);
        continue;
      }
      if (asked >= this.mentions.perMessage || !this.takeNameAllowance(writer)) break;
      asked++;
      work.push(this.start(id, "name"));
    }
    await Promise.all(work);
  }

  /** users.info calls in flight and waiting for a place. */
  get load(): { running: number; waiting: number } {
    return this.slots.load;
  }

  /** How many people the cache holds. */
  get size(): number {
    return this.cache.size;
  }

  private fresh(id: string): boolean {
    const entry = this.cache.get(id);
    return entry !== undefined && entry.expires > this.now();
  }

  /** The lookup of `id` of this kind in flight, or a new one. */
  private start(id: string, kind: "identity" | "name"): Promise<void> {
    const inflight = this.inflight[kind];
    let pending = inflight.get(id);
    if (!pending) {
      pending = this.fetch(id, kind).finally(() => inflight.delete(id));
      inflight.set(id, pending);
    }
    return pending;
  }

  /** One from the writer's allowance and one from the workspace's, or none from either. */
  private takeNameAllowance(writer: string): boolean {
    const now = this.now();
    let bucket = this.writers.get(writer);
    if (bucket === undefined) {
      const per = this.mentions.perWriterPerMinute;
      bucket = new TokenBucket(per, per);
      if (this.writers.size >= MAX_WRITERS) {
        const oldest = this.writers.keys().next().value;
        if (oldest !== undefined) this.writers.delete(oldest);
      }
      this.writers.set(writer, bucket);
    }
    if (bucket.readyAt(now) > now || this.nameRate.readyAt(now) > now) return false;
    return bucket.tryTake(now) && this.nameRate.tryTake(now);
  }

  private async fetch(id: string, kind: "identity" | "name"): Promise<void> {
    let person: KnownPerson | undefined;
    const call = () => this.slots.run(() => this.options.lookup(id));
    try {
      if (kind === "identity") person = await call();
      else {
        // A name waiting its turn may have come meanwhile (someone wrote): then no call.
        const named = await this.nameSlots.run(async () => (this.fresh(id) ? FOUND : call()));
        if (named === FOUND) return;
        person = named;
      }
    } catch (error) {
      // Too many waiting is our own limit, not Slack's answer: the next message tries again.
      if (error instanceof SlotsFull) return;
      person = undefined;
    }
    this.cache.delete(id);
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    // Failures are remembered briefly too, so a broken users.info is not hammered.
    const ttl = person ? this.ttlMs : this.failureTtlMs;
    this.cache.set(id, { person, expires: this.now() + ttl });
  }
}

const USER_MENTION = /^@[UW][A-Z0-9]+$/;

/** The user ids mentioned in Slack markup (`<@U123>` or `<@U123|name>`), in one pass. */
export function mentionedUserIds(text: string): string[] {
  const ids: string[] = [];
  for (const item of markupItems(text)) {
    const { target } = itemParts(item.inside);
    if (USER_MENTION.test(target)) ids.push(target.slice(1));
  }
  return ids;
}
