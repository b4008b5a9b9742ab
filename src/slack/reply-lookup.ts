import { STOP_ACTION_ID } from "./reply-blocks.js";
import type { SlackWebApi } from "./web-api.js";

/**
 * The bot's message in the thread whose Stop button carries this turn id: a placeholder
 * Slack took before a crash kept its ts from being recorded. Reads at most five pages.
 */
export async function findReplyInThread(
  slack: Pick<SlackWebApi, "replies">,
  where: { channel: string; threadTs: string; turnId: string },
): Promise<string | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < 5; page++) {
    const result = await slack.replies({
      channel: where.channel,
      ts: where.threadTs,
      limit: 200,
      ...(cursor ? { cursor } : {}),
    });
    for (const message of result.messages) {
      const carriesTurn = (message.blocks ?? []).some((block) =>
        (block.elements ?? []).some(
          (element) => element.action_id === STOP_ACTION_ID && element.value === where.turnId,
        ),
      );
      if (carriesTurn) return message.ts;
    }
    cursor = result.nextCursor;
    if (!cursor) return undefined;
  }
  return undefined;
}
