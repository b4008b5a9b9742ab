import { itemParts, markupItems } from "./markup.js";

/** What users.info gives us, reduced to what a message needs. */
export type UserLookup = (userId: string) => Promise<{ displayName: string } | undefined>;

export interface UserDirectoryOptions {
  lookup: UserLookup;
  /** How long a name is kept, ms; default 1 hour. */
  ttlMs?: number;
  /** Most names kept; default 5_000. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * Display names of Slack users, through a cache so a busy thread costs one users.info
 * call per person per hour. A failed lookup is not fatal: the caller shows the id.
 */
export class UserDirectory {
  private readonly cache = new Map<string, { name: string | undefined; expires: number }>();
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly options: UserDirectoryOptions) {
    this.ttlMs = options.ttlMs ?? 3_600_000;
    this.maxEntries = options.maxEntries ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  /** The cached name, if known. */
  name(userId: string): string | undefined {
    const entry = this.cache.get(userId);
    return entry && entry.expires > this.now() ? entry.name : undefined;
  }

  /** Makes sure the names of these users are cached (best effort). */
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

  private async fetch(id: string): Promise<void> {
    let name: string | undefined;
    try {
      name = (await this.options.lookup(id))?.displayName;
    } catch {
      name = undefined;
    }
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    // Failures are remembered briefly too, so a broken users.info is not hammered.
    this.cache.set(id, { name, expires: this.now() + (name ? this.ttlMs : 60_000) });
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
