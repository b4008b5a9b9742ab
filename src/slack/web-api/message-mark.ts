import type { SlackMessage } from "./web-api-responses.js";

/**
 * The invisible mark the bot puts on a message it posts, so that it can find the message
 * again: Slack's message metadata, an `event_type` with a small payload, which people never
 * see and `conversations.replies` returns with `include_all_metadata`. A post whose outcome
 * was lost (a crash before its ts was recorded, a 500 after Slack took it) is looked for by
 * its mark before it is sent again.
 */
export interface MessageMark {
  event_type: string;
  event_payload: Record<string, string | number>;
}

const REPLY = "assistant_bridge_reply";
const QUESTION = "assistant_bridge_question";

/** One message of a turn's reply: the turn, and which of its messages (0: the placeholder). */
export function replyMark(turnId: string, part: number): MessageMark {
  return { event_type: REPLY, event_payload: { turn: turnId, part } };
}

/** A question the bot posts for a person (the shortcut), by a key made for that post. */
export function questionMark(key: string): MessageMark {
  return { event_type: QUESTION, event_payload: { key } };
}

/** The reply part a mark names, if it is a reply's mark. */
export function markedReplyPart(mark: MessageMark): { turn: string; part: number } | undefined {
  const { turn, part } = mark.event_payload;
  if (mark.event_type !== REPLY || typeof turn !== "string" || typeof part !== "number") {
    return undefined;
  }
  return { turn, part };
}

/** Whether the message carries exactly this mark. */
export function carriesMark(message: SlackMessage, mark: MessageMark): boolean {
  const found = message.metadata;
  if (found?.event_type !== mark.event_type) return false;
  const payload = found.event_payload ?? {};
  return Object.entries(mark.event_payload).every(([key, value]) => payload[key] === value);
}
