import type { ReplyView } from "../bridge/ports.js";
import { CLEARED, type StatusWords, statusWords } from "./status-words.js";
import type { ThreadSignals } from "./thread-signals.js";
import type { ThreadStatusArgs } from "./web-api.js";

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
  /** The words last asked for ("" after a clear). */
  said: string;
}

/**
 * The line under a thread that says the assistant is working (`assistant.threads.setStatus`),
 * driven by the phases of the thread's replies and sent through its own budget, never the
 * edits'. A thread's turns run one at a time, so the line says what the earliest live turn
 * does and how many questions wait behind it; it is cleared when the last one ends.
 */
export class StatusLine {
  private readonly boards = new Map<string, Board>();

  constructor(private readonly signals: Pick<ThreadSignals<ThreadStatusArgs>, "set" | "resend">) {}

  /** Turn `turnId` of `thread` shows `view`. */
  show(thread: SlackThread, turnId: string, view: ReplyView): void {
    const key = threadKey(thread);
    let board = this.boards.get(key);
    if (!board) {
      board = { thread, turns: new Map(), said: "" };
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
    this.say(board);
    if (board.turns.size === 0) this.boards.delete(key);
  }

  /** The app posted in `thread`, which clears Slack's status line: it is set again if still wanted. */
  posted(thread: SlackThread): void {
    const board = this.boards.get(threadKey(thread));
    if (board && board.said !== "") this.signals.resend(thread.team, threadKey(thread));
  }

  private say(board: Board): void {
    const [first] = board.turns.values();
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
