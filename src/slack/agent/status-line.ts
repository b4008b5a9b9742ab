import type { ReplyView } from "../../bridge/ports.js";
import type { ThreadSignals } from "../calls/thread-signals.js";
import type { ThreadStatusArgs } from "../web-api/web-api.js";
import { CLEARED, type StatusWords, statusWords } from "./status-words.js";

/** A Slack thread, as the status line and the agent session key it. */
export interface SlackThread {
  team: string;
  channel: string;
  threadTs: string;
}

export function threadKey(thread: SlackThread): string {
  return `${thread.channel}\u0000${thread.threadTs}`;
}

/** The turns of one thread this process shows, in the order they began. */
interface Board {
  thread: SlackThread;
  turns: Map<string, ReplyView>;
  /** Turns whose reply has a message in the thread: it says itself what the turn does. */
  replied: Set<string>;
  /** The words last asked for ("" after a clear, and after a reply cleared them). */
  said: string;
}

/**
 * The line under a thread that says the assistant is working (`assistant.threads.setStatus`),
 * driven by the phases of the thread's replies and sent through its own budget, never the
 * edits'. A thread's turns run one at a time, so the line says what the earliest live turn
 * does and how many questions wait behind it, until that turn's reply has a message: Slack
 * clears the line when the app posts, and the reply (its status line, its stream) says the
 * rest. It is cleared when the last turn ends, if it still shows anything.
 */
export class StatusLine {
  private readonly boards = new Map<string, Board>();

  constructor(private readonly signals: Pick<ThreadSignals<ThreadStatusArgs>, "set" | "cleared">) {}

  /** Turn `turnId` of `thread` shows `view`. */
  show(thread: SlackThread, turnId: string, view: ReplyView): void {
    const key = threadKey(thread);
    let board = this.boards.get(key);
    if (!board) {
      board = { thread, turns: new Map(), replied: new Set(), said: "" };
      this.boards.set(key, board);
    }
    board.turns.set(turnId, view);
    this.say(board);
  }

  /** Turn `turnId` of `thread` ended: the line moves on to the next turn, or is cleared. */
  end(thread: SlackThread, turnId: string): void {
    const key = threadKey(thread);
    const board = this.boards.get(key);
    if (!board?.turns.delete(turnId)) return;
    board.replied.delete(turnId);
    this.say(board);
    if (board.turns.size === 0) this.boards.delete(key);
  }

  /**
   * Turn `turnId`'s reply posted in `thread`, which clears Slack's status line: nothing more is
   * said while that turn leads, and what still waited to be said is dropped. Words already on
   * their way may land after the post and show again: they are cleared once they have.
   */
  posted(thread: SlackThread, turnId: string): void {
    const board = this.boards.get(threadKey(thread));
    if (!board?.turns.has(turnId)) return;
    board.replied.add(turnId);
    board.said = "";
    if (!this.signals.cleared(thread.team, threadKey(thread))) return;
    const { channel, threadTs, team } = thread;
    void this.signals.set(team, threadKey(thread), {
      channel_id: channel,
      thread_ts: threadTs,
      ...CLEARED,
    });
  }

  private say(board: Board): void {
    const [entry] = board.turns.entries();
    // Words on their way to the reply's message say it better, and clear the line as it posts.
    if (entry && (board.replied.has(entry[0]) || writing(entry[1]))) return;
    const first = entry?.[1];
    const words: StatusWords = first ? statusWords(first, board.turns.size - 1) : CLEARED;
    const said = JSON.stringify(words);
    // Nothing was said yet: there is nothing to clear.
    if (said === board.said || (board.said === "" && words.status === "")) return;
    board.said = words.status === "" ? "" : said;
    const { channel, threadTs, team } = board.thread;
    void this.signals.set(team, threadKey(board.thread), {
      channel_id: channel,
      thread_ts: threadTs,
      ...words,
    });
  }
}

/** A turn whose answer has words to show: its reply is about to show them, or shows them. */
function writing(view: ReplyView): boolean {
  return view.phase.kind === "working" && view.body.trim() !== "";
}
