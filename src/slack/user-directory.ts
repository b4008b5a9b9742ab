import { CallSlots, SlotsFull } from "./call-slots.js";
import { itemParts, markupItems } from "./markup.js";

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
  now?: () => number;
}

interface Entry {
  /** Undefined: the lookup failed (or Slack knows no such person). */
  person: KnownPerson | undefined;
  expires: number;
}

/**
 * What Slack says of people (names for <@U…> mentions, their organisation, whether they are
 * guests), through a cache so a busy thread costs one users.info call per person per hour.
 * Lookups are bounded: a few in flight at once, a bounded queue behind them, a bounded
 * cache. A failed lookup is not fatal: the caller shows the id, or decides what an unknown
 * person may do.
 */
export class UserDirectory {
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly slots: CallSlots;
  private readonly ttlMs: number;
  private readonly failureTtlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly options: UserDirectoryOptions) {
    this.ttlMs = options.ttlMs ?? 3_600_000;
    this.failureTtlMs = options.failureTtlMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 5_000;
    this.now = options.now ?? Date.now;
    this.slots = new CallSlots(options.maxConcurrent ?? 4, options.maxWaiting ?? 100);
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

  /** Makes sure these people are cached (best effort; resolves once each lookup ended). */
  async resolve(userIds: Iterable<string>): Promise<void> {
    const work: Promise<void>[] = [];
    for (const id of new Set(userIds)) {
      const entry = this.cache.get(id);
      if (entry && entry.expires > this.now()) continue;
      let pending = this.inflight.get(id);
      if (!pending) {
        pending = this.fetch(id).finally(() => this.inflight.delete(id));
        this.inflight.set(id, pending);
      }
      work.push(pending);
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

  private async fetch(id: string): Promise<void> {
    let person: KnownPerson | undefined;
    try {
      person = await this.slots.run(() => this.options.lookup(id));
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
