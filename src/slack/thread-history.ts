import type { ThreadHistory, ThreadHistoryRequest, ThreadMessage } from "../bridge/ports.js";
import { type Clock, systemClock } from "../time.js";
import { classifyCallFailure } from "./call-failure.js";
import { slackTextToPlain } from "./inbound-text.js";
import { TokenBucket } from "./token-bucket.js";
import { mentionedUserIds, type UserDirectory } from "./user-directory.js";
import type { SlackMessage, ThreadPage } from "./web-api.js";

/** The Web API calls the history needs; the bot's SlackWebApi provides them. */
export interface HistoryClient {
  /** `conversations.replies`, one page read; throws the Web API client's error when it fails. */
  replies(args: {
    channel: string;
    ts: string;
    limit: number;
    cursor?: string;
    oldest?: string;
    inclusive?: boolean;
  }): Promise<ThreadPage>;
  /** `auth.test`: who the bot is, to know its own messages. */
  whoAmI(): Promise<{ userId: string; botId: string | undefined }>;
}

export interface SlackThreadHistoryOptions {
  client: HistoryClient;
  users: UserDirectory;
  /** Messages asked for per page; default 200 (Slack's advice for conversations.replies). */
  pageSize?: number;
  /** Pages read at most for one thread (beyond it the read fails); default 25. */
  maxPages?: number;
  /**
   * conversations.replies calls per minute for the workspace; default 40. The method is
   * Tier 3 (about 50/min); the rest is left for bursts and other callers.
   */
  perMinute?: number;
  /** Calls that may go back to back before `perMinute` applies; default 5. */
  burst?: number;
  /** The longest one read may take, 429 waits included, ms; default 20_000. */
  deadlineMs?: number;
  /** The rate tier's spacing, 429 waits and the deadline; default the system clock. */
  clock?: Clock;
}

export class HistoryReadError extends Error {
  constructor(
    message: string,
    readonly reason: "failed" | "too_long" | "timed_out",
  ) {
    super(message);
    this.name = "HistoryReadError";
  }
}

/**
 * Message subtypes that are someone saying something. Joins, topic changes, deleted-parent
 * tombstones and the like are not part of the discussion.
 */
const SPOKEN = new Set([undefined, "thread_broadcast", "file_share", "bot_message", "me_message"]);

/**
 * A thread's history from `conversations.replies`, page by page (cursor paging), within the
 * method's rate tier for the workspace: calls are spaced by a token bucket, and a 429 is
 * waited out (Retry-After) before the same page is asked again. Authors and mentions are
 * shown by display name, through the user directory's cache.
 *
 * In a DM with the bot every message is answered, so there is never anything in between to
 * pass on: DMs are not read at all.
 */
export class SlackThreadHistory implements ThreadHistory {
  private readonly bucket: TokenBucket;
  private readonly clock: Clock;
  private self: Promise<{ userId: string; botId: string | undefined }> | undefined;

  constructor(private readonly options: SlackThreadHistoryOptions) {
    this.bucket = new TokenBucket(options.perMinute ?? 40, options.burst ?? 5);
    this.clock = options.clock ?? systemClock;
  }

  async read(
    request: ThreadHistoryRequest,
    signal?: AbortSignal,
  ): Promise<{ messages: ThreadMessage[]; askerName: string }> {
    const { users } = this.options;
    if (request.channel.startsWith("D")) {
      return { messages: [], askerName: users.name(request.asker) ?? request.asker };
    }
    const self = await this.whoAmI();
    const raw = await this.fetchAll(request, signal);
    const spoken = raw.filter((m) => SPOKEN.has(m.subtype));
    const isSelf = (m: SlackMessage) =>
      m.user === self.userId || (self.botId !== undefined && m.bot_id === self.botId);
    const people = new Set<string>([request.asker]);
    for (const m of spoken) {
      if (isSelf(m)) continue;
      if (m.user) people.add(m.user);
      for (const id of mentionedUserIds(m.text)) people.add(id);
    }
    await users.resolve(people);
    const messages = spoken.map(
      (m): ThreadMessage => ({
        ts: m.ts,
        author: this.author(m),
        text: isSelf(m) ? "" : slackTextToPlain(m.text, { user: (id) => users.name(id) }),
        files: (m.files ?? []).map((f) => f.name || f.title || "a file"),
        bySelf: isSelf(m),
      }),
    );
    return { messages, askerName: users.name(request.asker) ?? request.asker };
  }

  private author(m: SlackMessage): string {
    const named = m.user ? this.options.users.name(m.user) : undefined;
    return named ?? m.username ?? m.bot_profile?.name ?? m.user ?? "someone";
  }

  private whoAmI(): Promise<{ userId: string; botId: string | undefined }> {
    this.self ??= this.options.client.whoAmI().catch((error: unknown) => {
      this.self = undefined;
      throw error;
    });
    return this.self;
  }

  private async fetchAll(
    request: ThreadHistoryRequest,
    signal: AbortSignal | undefined,
  ): Promise<SlackMessage[]> {
    const deadline = this.clock.now() + (this.options.deadlineMs ?? 20_000);
    const maxPages = this.options.maxPages ?? 25;
    const out: SlackMessage[] = [];
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= maxPages) {
        throw new HistoryReadError(`the thread has more than ${maxPages} pages`, "too_long");
      }
      const answer = await this.call(
        {
          channel: request.channel,
          ts: request.threadTs,
          limit: this.options.pageSize ?? 200,
          ...(cursor === undefined ? {} : { cursor }),
          // Later turns need only what came after; Slack then sends fewer pages.
          ...(request.after === null ? {} : { oldest: request.after, inclusive: false }),
        },
        deadline,
        signal,
      );
      out.push(...answer.messages);
      cursor = answer.nextCursor;
      if (cursor === undefined) return out;
    }
  }

  /** One call within the rate tier: waits for a token, and waits out 429s until the deadline. */
  private async call(
    args: Parameters<HistoryClient["replies"]>[0],
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<ThreadPage> {
    for (;;) {
      await this.waitUntil(this.bucket.readyAt(this.clock.now()), deadline, signal);
      if (!this.bucket.tryTake(this.clock.now())) continue;
      try {
        return await this.options.client.replies(args);
      } catch (error) {
        const failure = classifyCallFailure(error);
        if (failure.kind !== "rate_limited") {
          const reason = failure.kind === "permanent" ? failure.reason : "Slack unavailable";
          throw new HistoryReadError(`conversations.replies failed: ${reason}`, "failed");
        }
        await this.waitUntil(this.clock.now() + failure.retryAfterMs, deadline, signal);
      }
    }
  }

  private async waitUntil(at: number, deadline: number, signal?: AbortSignal): Promise<void> {
    if (at > deadline) {
      throw new HistoryReadError("reading the thread took too long", "timed_out");
    }
    const ms = at - this.clock.now();
    if (ms > 0) await this.clock.sleep(ms, signal);
  }
}
