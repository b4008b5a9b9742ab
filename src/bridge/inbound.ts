import type { SharedFile } from "../files/kinds.js";

/**
 * The one normalized shape every Slack entry point produces. Listeners build it,
 * the bridge records and answers it; nothing else about Slack reaches the bridge.
 */
export interface Inbound {
  /**
   * The installation's workspace: with channel and thread it keys the conversation, and
   * with the ts the turn, whoever wrote the message.
   */
  team: string;
  channel: string;
  /** A DM (`im`) is answered without a mention. */
  isDirect: boolean;
  /** The conversation key's thread: `thread_ts ?? ts`. */
  threadTs: string;
  /** The message's own ts (the dedup key with team and channel). */
  ts: string;
  user: string;
  /**
   * The writer's own organisation, kept on the turn; default `team`. In a Slack Connect
   * channel it is the other side's. Whether they may be answered is decided before accept.
   */
  authorTeam?: string;
  /** Readable plain text for the service: bot mention removed, markup made readable, trimmed. */
  text: string;
  /** The files the message carried, as Slack described them: read when the turn runs. */
  files: SharedFile[];
  /** The bot was @mentioned (an `app_mention`, or its mention in the text). */
  mentioned: boolean;
}
