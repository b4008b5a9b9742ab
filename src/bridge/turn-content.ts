import type { Conversation, ConversationStore, TurnStore } from "../store/stores.js";
import type { Turn } from "../store/turn.js";
import type { BridgeLogger, ThreadHistory, Withheld } from "./ports.js";
import { compareTs, composeThreadContext } from "./thread-context.js";
import type { StepContext } from "./turn-step.js";

export interface TurnContentOptions {
  /** Reads the Slack thread; without it every turn posts its question alone. */
  history: ThreadHistory | undefined;
  turns: TurnStore;
  conversations: ConversationStore;
  logger: BridgeLogger;
  /** Most characters of earlier thread messages put before a question; 0 turns it off. */
  budgetChars: number;
}

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

/**
 * What a turn posts to the service: its question, with the thread's messages the assistant
 * has not seen put before it (the rule is `composeThreadContext`). The history is read when
 * the turn runs, never before the turn is recorded.
 */
export class TurnContent {
  constructor(private readonly options: TurnContentOptions) {}

  /**
   * The step that fixes what a turn posts: composed once (the turn becomes `composed`), so
   * every later attempt posts, and looks for, the very same text.
   */
  readonly step = async (turn: Turn, context: StepContext): Promise<Turn> => {
    if (turn.state !== "received") return turn;
    const signal = context.live.waits.signal;
    const { content, through, notes } = await this.compose(turn, context.conversation, signal);
    // Stopped while reading: nothing is posted, so nothing is fixed (nor a note added).
    if (signal.aborted) return turn;
    const composed = await this.options.turns.recordContent(turn.id, {
      serviceContent: content,
      contextThroughTs: through,
      notes: [...turn.notes, ...notes],
    });
    context.live.reply.setNotes(composed.notes);
    return composed;
  };

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
    const { history, budgetChars, logger } = this.options;
    const passedThrough = conversation.passedThroughTs;
    // A question that starts its thread has nothing before it: no need to ask Slack.
    const startsThread = passedThrough === null && turn.messageTs === turn.threadTs;
    if (!history || budgetChars <= 0 || startsThread) {
      return { content: turn.content, through: turn.messageTs, notes: [] };
    }
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
      const context = composeThreadContext({
        question: turn.content,
        askerName: read.askerName,
        messages: read.messages,
        questionTs: turn.messageTs,
        passedThrough,
        questions,
        budgetChars,
      });
      const { included, leftOut, withheld } = context;
      logger.debug({ turn: turn.id, included, leftOut, withheld }, "thread context composed");
      const notes = leftOut > 0 ? [leftOutNote(leftOut)] : [];
      for (const reason of ["refused", "unchecked"] as const) {
        if (withheld[reason] > 0) notes.push(withheldNote(reason, withheld[reason]));
      }
      return { content: context.content, through: turn.messageTs, notes };
    } catch (error) {
      logger.warn(
        { turn: turn.id, err: error instanceof Error ? error.message : String(error) },
        "could not read the thread's history; passing the question on alone",
      );
      return { content: turn.content, through: null, notes: [HISTORY_NOTE] };
    }
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
