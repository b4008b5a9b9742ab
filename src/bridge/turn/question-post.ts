import type { TurnStore } from "../../store/stores.js";
import type { Turn } from "../../store/turn.js";
import type { AssistantService } from "../ports.js";
import { throughOutage } from "./outage.js";
import { serviceThreadOf } from "./thread-open.js";
import type { TurnContent } from "./turn-content.js";
import { callerOf, type StepContext } from "./turn-step.js";

/**
 * The steps that post a turn's question to its service thread exactly once. The attempt
 * is recorded before it is sent (`posting`); a turn found `posting` (a crash, or a failure
 * after sending) looks for its message in the thread before posting again. The attempt is
 * recorded with the question's text, in the write that fixes it (`attempt`), while the
 * thread may still be opening, so that the post waits for no round trip of its own.
 */
export class QuestionPost {
  constructor(
    private readonly deps: {
      service: AssistantService;
      turns: TurnStore;
      content: TurnContent;
      /** Resolves once the attempt's record would survive a power cut (Stores.durable). */
      durable?: () => Promise<void>;
    },
  ) {}

  /**
   * The question's text composed and fixed, with the post's attempt, in one write (and on
   * the disk), ahead of the post: nothing is sent yet, so the post that follows in this run
   * need not look first. A turn composed by an earlier process has its attempt recorded alone.
   */
  readonly attempt = async (turn: Turn, context: StepContext): Promise<Turn> => {
    let attempted: Turn;
    if (turn.state === "received") {
      const fixed = await this.deps.content.fix(turn, context);
      if (!fixed) return turn;
      attempted = await this.deps.turns.recordContent(turn.id, fixed, { attempt: true });
      await this.deps.durable?.();
      context.life.reply.setNotes(attempted.notes);
    } else if (turn.state === "composed") {
      attempted = await this.recordAttempt(turn.id);
    } else return turn;
    context.unsentAttempt = true;
    return attempted;
  };

  readonly step = async (turn: Turn, context: StepContext): Promise<Turn> => {
    if (turn.serviceMessageId !== null) return turn;
    const { service, content } = this.deps;
    const threadId = serviceThreadOf(context);
    const text = turn.serviceContent ?? turn.content;
    // The message is recorded in the write of the run's attempt, the turn's next write
    // (RunStart: no run starts on a message not recorded, and the start waits for one write,
    // not two one after the other). How far the conversation's thread is now passed on is
    // recorded meanwhile, not waited for. The steps go on.
    const recorded = (messageId: string): Turn => {
      const landing = content.posted(turn, context.conversation);
      landing.catch(() => undefined);
      context.landing.push(landing);
      context.unrecordedMessage = messageId;
      return { ...current, state: "message_posted", serviceMessageId: messageId };
    };
    let current = turn;
    return throughOutage(async () => {
      // Recorded by `attempt` and nothing sent since (told once only): no look, no record.
      const unsent = context.unsentAttempt === true;
      context.unsentAttempt = false;
      if (!unsent) {
        if (current.state === "posting") {
          const found = await this.findPosted(threadId, text, turn.conversationId, context);
          if (found) return recorded(found);
        }
        // Recorded, and on the disk, before the post leaves: a crash (or a power cut) after
        // it looks before posting again.
        current = await this.recordAttempt(turn.id);
      }
      const message = await service.postMessage(
        threadId,
        { content: text },
        { ...callerOf(context), ...threadNamed(context, threadId) },
      );
      return recorded(message.id);
    }, context.outage);
  };

  /** The post's attempt recorded, and brought to the disk. */
  private async recordAttempt(turnId: string): Promise<Turn> {
    const attempted = await this.deps.turns.recordPostAttempt(turnId);
    await this.deps.durable?.();
    return attempted;
  }

  /**
   * This turn's message, if an earlier attempt posted it: the newest user message with the
   * same content that comes after every message earlier turns of the conversation posted
   * (the same question asked twice must not be taken for the earlier one).
   */
  private async findPosted(
    threadId: string,
    content: string,
    conversationId: number,
    context: StepContext,
  ): Promise<string | undefined> {
    const claimed = await this.deps.turns.serviceMessageIds(conversationId);
    // Read as the thread's owner: the service shows a thread only to the token that made it.
    const messages = await this.deps.service.listMessages(threadId, callerOf(context));
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i];
      if (!message || claimed.has(message.id)) return undefined;
      if (message.content === content && (message.role ?? "user") === "user") return message.id;
    }
    return undefined;
  }
}

/**
 * Holds the post's body until the thread just opened is on the conversation's record (once
 * the post has its connection: nothing is written before), and refuses to send it should the
 * record keep another thread (a replica that opened one at the same moment): the turn fails
 * rather than post where no later turn would look. Nothing to hold for a recorded thread.
 */
function threadNamed(context: StepContext, threadId: string): { onSend?: () => Promise<void> } {
  const recorded = context.threadRecorded;
  if (!recorded) return {};
  return {
    onSend: async () => {
      const kept = await recorded;
      if (kept !== threadId) throw new Error(`the conversation keeps service thread ${kept}`);
    },
  };
}
