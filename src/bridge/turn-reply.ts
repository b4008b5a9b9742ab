import type { Turn, TurnStore } from "../store/turns.js";
import type { Reply, ReplySink } from "./ports.js";

/**
 * The reply of a turn, wired to the turn's record: every change of its Slack messages is
 * stored at once, and so is the moment its first message is about to be posted, so that
 * after a crash the sink continues in the same messages instead of posting new ones.
 */
export function turnReply(replies: ReplySink, turns: TurnStore, turn: Turn): Reply {
  return replies.reply(
    {
      turnId: turn.id,
      team: turn.team,
      channel: turn.channel,
      threadTs: turn.threadTs,
      parts: turn.replyParts,
      postAttempted: turn.replyPostAttempted,
    },
    {
      parts: (parts) => turns.update(turn.id, { replyParts: parts, replyTs: parts[0] ?? null }),
      posting: () => {
        turn.replyPostAttempted = true;
        turns.update(turn.id, { replyPostAttempted: true });
      },
    },
  );
}
