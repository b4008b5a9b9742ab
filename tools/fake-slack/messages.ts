/**
 * The fake workspace's messages: seeded history and what the bot posted, keyed by channel
 * and ts, read back in ts order the way Slack lists them.
 */
import type { Block, MessageContent } from "./blocks.js";

/** One thing a stream showed, in the order it first appeared. */
export type StreamItem =
  | { kind: "markdown"; text: string }
  | {
      kind: "task";
      id: string;
      title: string;
      status: string;
      details?: string;
      output?: string;
    }
  | { kind: "plan"; title: string }
  | { kind: "blocks"; blocks: Block[] };

export interface StreamState {
  /**
   * `streaming` until `chat.stopStream`; `stopped_by_user` once the person stopped it
   * (`FakeSlack.stopStreamAsUser`); `expired` once STREAM_EXPIRY_MS passed without an append.
   */
  state: "streaming" | "stopped" | "stopped_by_user" | "expired";
  lastAppendAt: number;
  /** The person the live text is for (in channels), and their workspace. */
  recipient: { user: string; team: string } | undefined;
  items: StreamItem[];
  /** The blocks `chat.stopStream` was given, shown under everything streamed. */
  endBlocks: Block[];
}

export interface StoredMessage {
  ts: string;
  channel: string;
  thread_ts?: string;
  /** Current text (the notification fallback when blocks are present). */
  text: string;
  blocks?: Block[];
  user?: string;
  /**
   * The writer's own organisation when it is not the workspace's (a person of another
   * organisation in a Slack Connect channel): read back as `user_team`, `source_team` and
   * `team`, as Slack sends a shared channel's messages.
   */
  user_team?: string;
  bot_id?: string;
  files?: unknown[];
  /** How many `chat.update` calls changed this message. */
  edits: number;
  /** Every version in order: the posted one first, the current one last (edits + 1 entries). */
  history: MessageContent[];
  /** Message metadata (`event_type`, `event_payload`): apps see it, people never do. */
  metadata?: Record<string, unknown>;
  /**
   * A message made by `chat.startStream` (streams.ts): what was streamed and whether it
   * still streams. Its `text` and `blocks` show the stream; `history` holds its start and
   * then its `chat.update` edits only.
   */
  stream?: StreamState;
}

/**
 * One change of a message, stamped by the fake's clock when it happened: the timeline an
 * observer outside the bot reads to see when a thread first showed what. Every change of a
 * stored message goes through `add`, `seed`, `edit`, `streamed` or `remove` so that it is
 * stamped here. A "stream" change is a streamed message that grew or ended (`chat.startStream`,
 * `chat.appendStream`, `chat.stopStream`): no edit, but what the thread shows changed.
 */
export interface MessageChange {
  at: number;
  kind: "post" | "edit" | "stream" | "delete";
  channel: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  /** What the message shows after the change (for a delete, what it showed before). */
  content: MessageContent;
}

export interface SeedMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user: string;
  /** The writer's own organisation, when it is another than the workspace's. */
  user_team?: string;
  text: string;
  blocks?: Block[];
  files?: unknown[];
  bot_id?: string;
}

export interface NewMessage extends MessageContent {
  channel: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  metadata?: Record<string, unknown>;
}

const MICROS_PER_SECOND = 1_000_000n;

/** A Slack ts ("1700000000.000100") as microseconds, so ts values compare exactly. */
export function tsToMicros(ts: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(ts);
  if (match === null) throw new Error(`not a Slack ts: ${JSON.stringify(ts)}`);
  const [, seconds = "0", fraction = ""] = match;
  return BigInt(seconds) * MICROS_PER_SECOND + BigInt(fraction.padEnd(6, "0"));
}

export function microsToTs(micros: bigint): string {
  const fraction = (micros % MICROS_PER_SECOND).toString().padStart(6, "0");
  return `${micros / MICROS_PER_SECOND}.${fraction}`;
}

function byTs(a: StoredMessage, b: StoredMessage): number {
  const diff = tsToMicros(a.ts) - tsToMicros(b.ts);
  return diff < 0n ? -1 : diff > 0n ? 1 : 0;
}

function contentOf(message: MessageContent): MessageContent {
  return message.blocks === undefined
    ? { text: message.text }
    : { text: message.text, blocks: message.blocks };
}

export class MessageStore {
  /** Every post, edit and delete in the order they happened. */
  readonly timeline: MessageChange[] = [];
  private readonly channels = new Map<string, Map<string, StoredMessage>>();
  /** The greatest ts handed out or seeded, so a new post always sorts after older ones. */
  private lastMicros = 0n;

  /** @param now the clock in ms since the epoch; new ts values follow it where they can. */
  constructor(private readonly now: () => number) {}

  /** A unique ts, strictly greater than every ts this store has seen. */
  nextTs(): string {
    const fromClock = BigInt(Math.floor(this.now())) * 1000n;
    this.lastMicros = fromClock > this.lastMicros ? fromClock : this.lastMicros + 1n;
    return microsToTs(this.lastMicros);
  }

  seed(seed: SeedMessage): StoredMessage {
    const micros = tsToMicros(seed.ts);
    if (this.find(seed.channel, seed.ts) !== undefined) {
      throw new Error(`seedMessage: ${seed.channel}/${seed.ts} already exists`);
    }
    if (micros > this.lastMicros) this.lastMicros = micros;
    return this.keep(seed.ts, seed);
  }

  add(fresh: NewMessage): StoredMessage {
    return this.keep(this.nextTs(), fresh);
  }

  /** Stores a message at `ts`, with the optional fields it was given. */
  private keep(
    ts: string,
    from: NewMessage & { files?: unknown[]; user_team?: string },
  ): StoredMessage {
    const message: StoredMessage = {
      ts,
      channel: from.channel,
      text: from.text,
      edits: 0,
      history: [contentOf(from)],
    };
    if (from.thread_ts !== undefined) message.thread_ts = from.thread_ts;
    if (from.blocks !== undefined) message.blocks = from.blocks;
    if (from.user !== undefined) message.user = from.user;
    if (from.user_team !== undefined) message.user_team = from.user_team;
    if (from.bot_id !== undefined) message.bot_id = from.bot_id;
    if (from.files !== undefined) message.files = from.files;
    if (from.metadata !== undefined) message.metadata = from.metadata;
    this.channelMap(from.channel).set(ts, message);
    this.stamp("post", message);
    return message;
  }

  /** Replaces the content of a stored message and counts the edit. */
  edit(message: StoredMessage, content: MessageContent): void {
    message.text = content.text;
    if (content.blocks === undefined) delete message.blocks;
    else message.blocks = content.blocks;
    message.edits += 1;
    message.history.push(contentOf(content));
    this.stamp("edit", message);
  }

  /** Stamps what a streamed message shows now (streams.ts changed it in place). */
  streamed(message: StoredMessage): void {
    this.stamp("stream", message);
  }

  find(channel: string, ts: string): StoredMessage | undefined {
    return this.channels.get(channel)?.get(ts);
  }

  remove(channel: string, ts: string): boolean {
    const message = this.find(channel, ts);
    if (message === undefined) return false;
    this.stamp("delete", message);
    return this.channels.get(channel)?.delete(ts) ?? false;
  }

  /** Every message of the channel, top-level and threaded, in ts order. */
  inChannel(channel: string): StoredMessage[] {
    return [...(this.channels.get(channel)?.values() ?? [])].sort(byTs);
  }

  /** The thread's parent (when known) first, then its replies in ts order. */
  thread(channel: string, threadTs: string): StoredMessage[] {
    const all = this.inChannel(channel);
    const parent = all.filter((m) => m.ts === threadTs);
    const replies = all.filter((m) => m.ts !== threadTs && m.thread_ts === threadTs);
    return [...parent, ...replies];
  }

  clear(): void {
    this.channels.clear();
    this.timeline.length = 0;
    this.lastMicros = 0n;
  }

  private stamp(kind: MessageChange["kind"], message: StoredMessage): void {
    const change: MessageChange = {
      at: this.now(),
      kind,
      channel: message.channel,
      ts: message.ts,
      content: contentOf(message),
    };
    if (message.thread_ts !== undefined) change.thread_ts = message.thread_ts;
    if (message.user !== undefined) change.user = message.user;
    if (message.bot_id !== undefined) change.bot_id = message.bot_id;
    this.timeline.push(change);
  }

  private channelMap(channel: string): Map<string, StoredMessage> {
    let map = this.channels.get(channel);
    if (map === undefined) {
      map = new Map();
      this.channels.set(channel, map);
    }
    return map;
  }
}
