import type {
  ThreadHistory,
  ThreadHistoryRequest,
  ThreadMessage,
  Withheld,
} from "../../bridge/ports.js";
import { TokenBucket } from "../../budgets/token-bucket.js";
import { sharedFiles } from "../../files/kinds.js";
import { type Clock, systemClock } from "../../time.js";
import type { Admission, Author } from "../admission/admission.js";
import { mentionedUserIds, type UserDirectory } from "../admission/user-directory.js";
import { classifyCallFailure } from "../web-api/call-failure.js";
import type { SlackMessage, ThreadPage } from "../web-api/web-api.js";
import { slackTextToPlain } from "./inbound-text.js";

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
  /**
   * Who the bot answers in this workspace (admission.ts): a message passes on only when the
   * bot would answer its author.
   */
  admission: Pick<Admission, "check">;
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
 * Only people the bot would answer are passed on (contract: Trust): each message's author
 * goes through the same rule as a message sent to the bot (Admission), once per distinct
 * author, the organisation Slack names on the message standing for the event's. A message
 * of anyone else, or of someone who cannot be checked in time, keeps only its ts and why it
 * was withheld: no author, no text, no files, and its mentions are not looked up.
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
    const others = spoken.filter((m) => !isSelf(m));
    // Who wrote what, once per person: it names them, and decides what is passed on.
    const authors = others.flatMap((m) => (m.user ? [m.user] : []));
    await users.resolve([request.asker, ...authors]);
    const withheld = await this.judge(others);
    // Names of the people mentioned, only in what is passed on, within the directory's bounds
    // per message and per writer; a name not looked up shows as the id.
    await Promise.all(
      others
        .filter((m) => !withheld.has(m) && m.user)
        .map((m) => users.resolveMentioned(mentionedUserIds(m.text), m.user as string)),
    );
    const messages = spoken.map((m): ThreadMessage => {
      const why = withheld.get(m);
      if (why !== undefined) {
        return { ts: m.ts, author: "", text: "", files: [], bySelf: false, withheld: why };
      }
      return {
        ts: m.ts,
        author: this.author(m),
        text: isSelf(m) ? "" : slackTextToPlain(m.text, { user: (id) => users.name(id) }),
        files: isSelf(m) ? [] : sharedFiles(m.files),
        bySelf: isSelf(m),
      };
    });
    return { messages, askerName: users.name(request.asker) ?? request.asker };
  }

  /**
   * The messages whose authors the bot would not answer, and why: the admission rule, asked
   * once per distinct author as the message names them. A message naming no author at all
   * is not passed on.
   */
  private async judge(messages: readonly SlackMessage[]): Promise<Map<SlackMessage, Withheld>> {
    const verdicts = new Map<string, Promise<Withheld | undefined>>();
    const byMessage = messages.map((m) => {
      const author = authorOf(m);
      if (author === undefined) return Promise.resolve<Withheld | undefined>("refused");
      const key = [author.user, author.team, author.confirm, author.app].join("\u0000");
      let verdict = verdicts.get(key);
      if (verdict === undefined) {
        verdict = this.options.admission
          .check(author)
          .then((refusal) =>
            refusal === undefined ? undefined : refusal === "unchecked" ? "unchecked" : "refused",
          );
        verdicts.set(key, verdict);
      }
      return verdict;
    });
    const results = await Promise.all(byMessage);
    const withheld = new Map<SlackMessage, Withheld>();
    messages.forEach((m, i) => {
      const why = results[i];
      if (why !== undefined) withheld.set(m, why);
    });
    return withheld;
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

/**
 * A thread message's author as the admission rule takes one. `user_team` names the writer's
 * organisation, as in an event of a shared channel; without it `team` is only a hint (in a
 * channel shared with other organisations it need not be the writer's, and the message does
 * not say whether the channel is shared), so users.info confirms it: the same lookup that
 * names the author, cached per person. An integration posting without a user is judged by
 * the organisation Slack names for its bot.
 */
function authorOf(m: SlackMessage): Author | undefined {
  if (m.user) {
    const named = m.user_team || undefined;
    return { user: m.user, team: named ?? (m.team || undefined), confirm: named === undefined };
  }
  const team = m.bot_profile?.team_id || m.team || undefined;
  return m.bot_id && team ? { user: m.bot_id, team, app: true } : undefined;
}
