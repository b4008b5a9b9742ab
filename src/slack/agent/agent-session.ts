import type { ThreadSignals } from "../calls/thread-signals.js";
import type { SessionStatusArgs } from "../web-api/web-api.js";
import { type SlackThread, threadKey } from "./status-line.js";

/** Slack takes a session title of 1 to 200 characters. */
const TITLE_MAX = 200;

/**
 * A session's title from a question: whitespace runs as one space, trimmed, and cut at a
 * word (with "…") to fit; undefined when nothing is left.
 */
export function sessionTitle(question: string): string | undefined {
  const flat = question.replace(/\s+/g, " ").trim();
  if (flat === "") return undefined;
  if (flat.length <= TITLE_MAX) return flat;
  const cut = flat.slice(0, TITLE_MAX - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > TITLE_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The person who asked and what, as the reply's target tells it. */
export interface Asked {
  user: string;
  text: string;
  startsThread: boolean;
}

/**
 * A thread's agent session (`agents.sessions.setStatus`): `processing` while any of its
 * turns is live in this process, which shows Slack's own stop control, and `active` again
 * when the last one ends, which Slack never does by itself. The call that creates the
 * session names it after the question and credits the asker; a question that opens its
 * thread also renames the session (`agents.sessions.rename`) once the session exists, in
 * case Slack had made one without that title.
 */
export class AgentSessions {
  private readonly live = new Map<string, Set<string>>();

  constructor(
    private readonly states: Pick<ThreadSignals<SessionStatusArgs>, "set">,
    private readonly titles: Pick<
      ThreadSignals<{ channel_id: string; thread_ts: string; title: string }>,
      "set"
    >,
  ) {}

  /** Turn `turnId` of `thread` began (its reply opened). */
  begin(thread: SlackThread, turnId: string, asked: Asked | undefined): void {
    const key = threadKey(thread);
    const turns = this.live.get(key) ?? new Set<string>();
    this.live.set(key, turns);
    const first = turns.size === 0;
    turns.add(turnId);
    if (!first) return;
    const title = asked ? sessionTitle(asked.text) : undefined;
    const where = { channel_id: thread.channel, thread_ts: thread.threadTs };
    void this.states
      .set(thread.team, key, {
        ...where,
        status: "processing",
        ...(title !== undefined && { title }),
        ...(asked && { initiator_user_id: asked.user }),
      })
      .then((landed) => {
        if (landed && title !== undefined && asked?.startsThread) {
          return this.titles.set(thread.team, key, { ...where, title });
        }
      });
  }

  /** Turn `turnId` of `thread` ended: the session rests once no turn of the thread is live. */
  end(thread: SlackThread, turnId: string): void {
    const key = threadKey(thread);
    const turns = this.live.get(key);
    if (!turns?.delete(turnId)) return;
    if (turns.size === 0) this.rest(thread);
  }

  /**
   * Slack's stop was pressed where this process runs nothing (an answer already over, or one
   * a crash left `processing`): the session leaves `processing` all the same.
   */
  settle(thread: SlackThread): void {
    if ((this.live.get(threadKey(thread))?.size ?? 0) === 0) this.rest(thread);
  }

  private rest(thread: SlackThread): void {
    const key = threadKey(thread);
    this.live.delete(key);
    void this.states.set(thread.team, key, {
      channel_id: thread.channel,
      thread_ts: thread.threadTs,
      status: "active",
    });
  }
}
