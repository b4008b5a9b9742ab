import { STOP_ACTION_ID } from "../render/reply-blocks.js";
import { carriesMark, type MessageMark, markedReplyPart } from "./message-mark.js";
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
export function findMarkedMessage(
  slack: Pick<SlackWebApi, "replies">,
  where: MarkedMessageQuery,
): Promise<string | undefined> {
  return firstInThread(
    slack,
    where,
    (message) => carriesMark(message, where.mark) || isOldPlaceholder(message, where.mark),
  );
}

/** Where to look for a stream whose start's answer was lost. */
export interface UnmarkedReplyQuery {
  channel: string;
  threadTs: string;
  /** It came after this message (the reply's previous part, or the question). */
  after: string;
  /** The bot's own bot id: only its messages count. */
  botId: string;
}

/** A message ts as a number of microseconds, so that two compare exactly. */
function micros(ts: string): bigint {
  const [seconds = "0", fraction = ""] = ts.split(".");
  return BigInt(seconds) * 1_000_000n + BigInt(fraction.padEnd(6, "0").slice(0, 6));
}

/**
 * The ts of the bot's first message after `after` that carries no mark at all: a native
 * stream cannot carry one until it stops, and every other message the bot posts is marked,
 * so this is a stream started for the reply whose ts the bot never learned.
 */
export function findUnmarkedReply(
  slack: Pick<SlackWebApi, "replies">,
  where: UnmarkedReplyQuery,
): Promise<string | undefined> {
  const after = micros(where.after);
  return firstInThread(
    slack,
    where,
    (message) =>
      message.bot_id === where.botId &&
      message.metadata === undefined &&
      micros(message.ts) > after,
  );
}

/** The first message of the thread that `matches`, reading at most five pages. */
async function firstInThread(
  slack: Pick<SlackWebApi, "replies">,
  where: { channel: string; threadTs: string },
  matches: (message: SlackMessage) => boolean,
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
    const found = result.messages.find(matches);
    if (found) return found.ts;
    cursor = result.nextCursor;
    if (!cursor) return undefined;
  }
  return undefined;
}
