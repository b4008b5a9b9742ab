import { fileName } from "../../files/kinds.js";
import { fileNotes } from "../../files/notes.js";
import type { ReadFiles } from "../../files/reader.js";
import type { Conversation, ConversationStore, TurnStore } from "../../store/stores.js";
import type { Turn } from "../../store/turn.js";
import type {
  BridgeLogger,
  SharedFilesReader,
  ThreadHistory,
  ThreadMessage,
  Withheld,
} from "../ports.js";
import { compareTs, composeThreadContext, unseenMessages } from "./thread-context.js";
import type { StepContext } from "./turn-step.js";

export interface TurnContentOptions {
  /** Reads the Slack thread; without it every turn posts its question alone. */
  history: ThreadHistory | undefined;
  turns: TurnStore;
  conversations: ConversationStore;
  logger: BridgeLogger;
  /**
   * Most characters of earlier thread messages and shared files put before a question; 0
   * passes the question alone.
   */
  budgetChars: number;
  /** Reads the files shared with a question; without it no file is read (each is noted). */
  files?: SharedFilesReader;
}

/** What the thread gave the composition. */
interface ThreadRead {
  messages: ThreadMessage[];
  askerName: string | undefined;
  /** ts of the thread's messages that reach the service as questions of their own. */
  questions: Set<string>;
  notes: string[];
  /** The ts the composed text carries the thread up to (TurnContent.posted); null: none read. */
  through: string | null;
}

const NOT_READ = "this bot does not read files";

/** The question of a message that is only files: what the person shared is what they ask about. */
export const FILES_ONLY = "(No words: the person shared the files above.)";

export const HISTORY_NOTE =
  "I couldn't read this thread's earlier messages, so the assistant saw only your question.";

const leftOutNote = (count: number) =>
  `This thread is long: ${count} of its earlier message${count === 1 ? " was" : "s were"} left out of what the assistant saw.`;

/** Says how many of the thread's messages were withheld, and why; never whose. */
export function withheldNote(reason: Withheld, count: number): string {
  const one = count === 1;
  const left = `${count} earlier message${one ? " in this thread was" : "s in this thread were"} left out of what the assistant saw`;
  return reason === "refused"
    ? `${left}: ${one ? "it is from someone" : "they are from people"} I don't answer.`
    : `${left}: I couldn't check who wrote ${one ? "it" : "them"} just now.`;
}

/** A turn's text for the service as its record fixes it (TurnStore.recordContent). */
export type FixedContent = Parameters<TurnStore["recordContent"]>[1];

/**
 * What a turn posts to the service: its question, with the thread's messages the assistant
 * has not seen put before it (the rule is `composeThreadContext`). The history is read when
 * the turn runs, never before the turn is recorded.
 */
export class TurnContent {
  constructor(private readonly options: TurnContentOptions) {}

  /**
   * What a turn posts, composed, for its record to fix once (QuestionPost.attempt), so that
   * every later attempt posts, and looks for, the very same text; undefined when the turn was
   * stopped or left while the thread was read: nothing is posted, so nothing is fixed (nor a
   * note added).
   */
  async fix(turn: Turn, context: StepContext): Promise<FixedContent | undefined> {
    const signal = context.life.waits;
    const { content, through, notes } = await this.compose(turn, context.conversation, signal);
    if (signal.aborted) return undefined;
    return { serviceContent: content, contextThroughTs: through, notes: [...turn.notes, ...notes] };
  }

  /**
   * After the question reached the service: the conversation has passed its thread on up
   * to this question, so the next turn starts after it. Without a history read nothing
   * moves, and the next turn passes on what this one could not. `conversation` is as the
   * turn's steps last read it (the turn holds it: nobody else moves it meanwhile).
   */
  async posted(turn: Turn, conversation: Conversation): Promise<void> {
    const through = turn.contextThroughTs;
    if (through === null) return;
    const current = conversation.passedThroughTs;
    if (current === null || compareTs(through, current) > 0) {
      await this.options.conversations.setPassedThrough(turn.conversationId, through);
    }
  }

  private async compose(
    turn: Turn,
    conversation: Conversation,
    signal: AbortSignal | undefined,
  ): Promise<{ content: string; through: string | null; notes: string[] }> {
    const passedThrough = conversation.passedThroughTs;
    const thread = await this.readThread(turn, passedThrough, signal);
    const files = await this.readFiles(turn, thread, passedThrough, signal);
    const context = composeThreadContext({
      question: turn.content.trim() === "" ? FILES_ONLY : turn.content,
      askerName: thread.askerName,
      messages: thread.messages,
      questionTs: turn.messageTs,
      passedThrough,
      questions: thread.questions,
      budgetChars: this.options.budgetChars,
      files: files.texts,
    });
    const { included, leftOut, withheld } = context;
    this.options.logger.debug(
      { turn: turn.id, included, leftOut, withheld, files: files.texts.length },
      "thread context composed",
    );
    const notes = [...thread.notes];
    if (leftOut > 0) notes.push(leftOutNote(leftOut));
    for (const reason of ["refused", "unchecked"] as const) {
      if (withheld[reason] > 0) notes.push(withheldNote(reason, withheld[reason]));
    }
    notes.push(...fileNotes(files.unread, context.filesCut, context.filesLeftOut));
    return { content: context.content, through: thread.through, notes };
  }

  /**
   * The thread's messages the rule may pass on. None where there is nothing to read (a
   * question that starts its thread, the history turned off); when Slack cannot tell, none
   * either, with a note, and the conversation does not move past them.
   */
  private async readThread(
    turn: Turn,
    passedThrough: string | null,
    signal: AbortSignal | undefined,
  ): Promise<ThreadRead> {
    const { history, budgetChars, logger } = this.options;
    const none = { messages: [], askerName: undefined, questions: new Set<string>(), notes: [] };
    // A question that starts its thread has nothing before it: no need to ask Slack.
    const startsThread = passedThrough === null && turn.messageTs === turn.threadTs;
    if (!history || budgetChars <= 0 || startsThread) return { ...none, through: turn.messageTs };
    try {
      const read = await history.read(
        {
          team: turn.team,
          channel: turn.channel,
          threadTs: turn.threadTs,
          after: passedThrough,
          asker: turn.user,
        },
        signal,
      );
      const questions = new Set<string>();
      // One at a time: a long thread must not take every connection of a pool at once.
      for (const { ts } of read.messages) {
        if (await this.isQuestion(turn, ts)) questions.add(ts);
      }
      const { messages, askerName } = read;
      return { messages, askerName, questions, notes: [], through: turn.messageTs };
    } catch (error) {
      logger.warn(
        { turn: turn.id, err: error instanceof Error ? error.message : String(error) },
        "could not read the thread's history; passing the question on alone",
      );
      return { ...none, notes: [HISTORY_NOTE], through: null };
    }
  }

  /**
   * The text of the question's own files, then of the files shared in the messages of the
   * thread that are passed on (never a withheld one's, nor another question's).
   */
  private async readFiles(
    turn: Turn,
    thread: ThreadRead,
    passedThrough: string | null,
    signal: AbortSignal | undefined,
  ): Promise<ReadFiles> {
    const { files } = this.options;
    const unseen = unseenMessages({
      messages: thread.messages,
      questionTs: turn.messageTs,
      passedThrough,
      questions: thread.questions,
    });
    const shared = [
      ...turn.files,
      ...unseen.flatMap((m) => (m.withheld === undefined ? m.files : [])),
    ];
    if (shared.length === 0) return { texts: [], unread: [] };
    if (!files)
      return { texts: [], unread: shared.map((f) => ({ name: fileName(f), why: NOT_READ })) };
    return files.read(turn.team, shared, signal);
  }

  /**
   * Whether a thread message reaches the service as a question of its own: this turn's,
   * one already posted, or one of a turn still to run. A turn that ended before posting
   * (refused, failed) is context like any other message.
   */
  private async isQuestion(turn: Turn, ts: string): Promise<boolean> {
    if (ts === turn.messageTs) return true;
    const other = await this.options.turns.byMessage(turn.team, turn.channel, ts);
    return other !== undefined && (other.serviceMessageId !== null || other.state !== "finished");
  }
}
