import type { ConversationStore } from "../../store/stores.js";
import type { Turn } from "../../store/turn.js";
import type { AssistantService } from "../ports.js";
import { throughOutage } from "./outage.js";
import { callerOf, type StepContext } from "./turn-step.js";

/**
 * The first step: the conversation's service thread, opened once and kept on the conversation
 * with whom it was opened as (the asker's own token, or the shared one): the service keeps a
 * thread for the token that created it, so every later call about it is sent as that owner.
 * The step ends once the thread is open; its record lands while the question's post gets
 * under way, and the post's body waits for it.
 */
export function threadOpen(service: AssistantService, conversations: ConversationStore) {
  return async (turn: Turn, context: StepContext): Promise<Turn> => {
    const { conversation } = context;
    if (conversation.serviceThreadId) return turn;
    let openedAs: string | null = null;
    const thread = await throughOutage(
      () =>
        service.openThread(
          { assistantId: conversation.assistantId },
          {
            ...callerOf(context),
            // The attempt that is answered is the last one sent.
            onSend: (sent) => {
              openedAs = sent.identity;
            },
          },
        ),
      context.outage,
    );
    // Set once (a second call keeps the first), and read back: the thread kept is the one used.
    // Not waited for here: the question's post gets under way meanwhile, its body held until
    // the record has landed (StepContext.threadRecorded), and the turn ends only once it has.
    context.conversation = {
      ...conversation,
      serviceThreadId: thread.id,
      serviceThreadOwner: openedAs,
    };
    const recorded = conversations
      .setServiceThread(conversation.id, thread.id, openedAs)
      .then((kept) => {
        if (kept) context.conversation = kept;
        return kept?.serviceThreadId ?? thread.id;
      });
    recorded.catch(() => undefined);
    context.landing.push(recorded);
    context.threadRecorded = recorded;
    return turn;
  };
}

/** The service thread of a context whose first step has run. */
export function serviceThreadOf(context: StepContext): string {
  const id = context.conversation.serviceThreadId;
  if (!id) throw new Error(`conversation ${context.conversation.id} has no service thread`);
  return id;
}
