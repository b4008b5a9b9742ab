import { carriesMark, type MessageMark, markedReplyPart } from "./message-mark.js";
import { STOP_ACTION_ID } from "./reply-blocks.js";
import type { SlackMessage, SlackWebApi } from "./web-api.js";

/** Where to look, and for which mark. */
export interface MarkedMessageQuery {
  channel: string;
  threadTs: string;
  mark: MessageMark;
}

/** A placeholder posted before marks existed is known by its Stop button's turn id. */
function isOldPlaceholder(message: SlackMessage, mark: MessageMark): boolean {
  const reply = markedReplyPart(mark);
  if (reply?.part !== 0) return false;
  return (message.blocks ?? []).some((block) =>
    (block.elements ?? []).some(
      (element) => element.action_id === STOP_ACTION_ID && element.value === reply.turn,
    ),
  );
}

/**
 * The ts of the bot's message in the thread that carries `mark` (message-mark.ts): a post
 * Slack took although the bot never learned its ts (a crash, an answer lost to a 500).
 * Reads at most five pages; a failed read rejects with the Web API's error.
 */
export async function findMarkedMessage(
  slack: Pick<SlackWebApi, "replies">,
  where: MarkedMessageQuery,
): Promise<string | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < 5; page++) {
    const result = await slack.replies({
      channel: where.channel,
      ts: where.threadTs,
      limit: 200,
      include_all_metadata: true,
      ...(cursor ? { cursor } : {}),
    });
    for (const message of result.messages) {
      if (carriesMark(message, where.mark) || isOldPlaceholder(message, where.mark)) {
        return message.ts;
      }
    }
    cursor = result.nextCursor;
    if (!cursor) return undefined;
  }
  return undefined;
}
