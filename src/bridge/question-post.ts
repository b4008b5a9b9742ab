import type { Conversation } from "../store/conversations.js";
import type { Turn, TurnStore } from "../store/turns.js";
import { type OutageOptions, throughOutage } from "./outage.js";
import type { AssistantService } from "./ports.js";
import type { TurnContent } from "./turn-content.js";

export interface QuestionPostDeps {
  service: AssistantService;
  turns: TurnStore;
  /** Composes the text with the thread's context; without it the question goes alone. */
  content: TurnContent | undefined;
}

/**
 * Posts a turn's question to its service thread exactly once. The text is composed (and
 * stored) first; an attempt is recorded before it is sent; and a turn whose earlier
 * attempt may have reached the service (a crash, or a failure after sending) looks for
 * its message in the thread before posting again.
 */
export class QuestionPost {
  constructor(private readonly deps: QuestionPostDeps) {}

  /**
   * Posts `turn`'s question and records the service message id on the turn. Resolves
   * false, having posted nothing, when `stopped()` turns true before the post is sent.
   */
  async post(
    turn: Turn,
    conversation: Conversation,
    threadId: string,
    options: { outage: OutageOptions; signal: AbortSignal; party: string; stopped: () => boolean },
  ): Promise<boolean> {
    const { service, turns, content } = this.deps;
    const text = content ? await content.of(turn, conversation, options.signal) : turn.content;
    if (options.stopped()) return false;
    const messageId = await throughOutage(async () => {
      if (turn.postAttempted) {
        const found = await this.findPosted(threadId, text, turn.conversationId);
        if (found) return found;
      }
      turn.postAttempted = true;
      turns.update(turn.id, { postAttempted: true });
      const message = await service.postMessage(
        threadId,
        { content: text },
        { party: options.party },
      );
      return message.id;
    }, options.outage);
    turn.serviceMessageId = messageId;
    turns.update(turn.id, { serviceMessageId: messageId, state: "message_posted" });
    content?.posted(turn);
    return true;
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
  ): Promise<string | undefined> {
    const claimed = this.deps.turns.serviceMessageIds(conversationId);
    const messages = await this.deps.service.listMessages(threadId);
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i];
      if (!message || claimed.has(message.id)) return undefined;
      if (message.content === content && (message.role ?? "user") === "user") return message.id;
    }
    return undefined;
  }
}
