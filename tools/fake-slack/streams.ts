/**
 * Native streaming as the fake understands it: `chat.startStream`, `chat.appendStream` and
 * `chat.stopStream` with their arguments checked the way Slack is documented or reported to
 * check them, a streaming state per message, and what the streamed message shows.
 *
 * Reported, not documented (slack-facts.md, "Slack's agent surface"), and modelled here: a
 * stream expires five minutes after its last append; a streamed message holds at most 12,000
 * characters of Markdown; a task card's `details` add to what it said, the other fields
 * replace it.
 */
import { type Block, MAX_BLOCKS, MAX_MARKDOWN_CHARS, parseBlocks } from "./blocks.js";
import type { MessageStore, StoredMessage, StreamItem, StreamState } from "./messages.js";
import { tablesError } from "./table-block.js";

/** A stream ends by itself this long after its last append (reported), ms. */
export const STREAM_EXPIRY_MS = 5 * 60_000;

const TASK_STATUSES = new Set(["pending", "in_progress", "complete", "error"]);

/** What the stream methods read and change of the workspace (a part of methods.ts's). */
export interface StreamWorkspace {
  readonly botUserId: string;
  readonly botId: string;
  readonly store: MessageStore;
  readonly now: () => number;
  /** Channels where Slack answers `channel_type_not_supported`. */
  readonly streamsRefused: ReadonlySet<string>;
}

type Args = Record<string, unknown>;
type Body = { ok: boolean; error?: string; [key: string]: unknown };

const fail = (error: string): Body => ({ ok: false, error });

function text(args: Args, key: string): string | undefined {
  const value = args[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const optionalString = (value: unknown) => value === undefined || typeof value === "string";

/** One chunk read, or undefined when Slack would answer `invalid_chunks`. */
function readChunk(chunk: unknown): StreamItem | undefined {
  if (!isRecord(chunk)) return undefined;
  switch (chunk.type) {
    case "markdown_text":
      return typeof chunk.text === "string" ? { kind: "markdown", text: chunk.text } : undefined;
    case "task_update": {
      const { id, title, status, details, output, sources } = chunk;
      const valid =
        typeof id === "string" &&
        id !== "" &&
        typeof title === "string" &&
        typeof status === "string" &&
        TASK_STATUSES.has(status) &&
        optionalString(details) &&
        optionalString(output) &&
        (sources === undefined || Array.isArray(sources));
      if (!valid) return undefined;
      return {
        kind: "task",
        id,
        title,
        status,
        ...(details === undefined ? {} : { details: details as string }),
        ...(output === undefined ? {} : { output: output as string }),
      };
    }
    case "plan_update":
      return typeof chunk.title === "string" ? { kind: "plan", title: chunk.title } : undefined;
    case "blocks": {
      const blocks = parseBlocks(chunk.blocks);
      if (!Array.isArray(blocks) || blocks.length > MAX_BLOCKS) return undefined;
      if (tablesError(blocks) !== undefined) return undefined;
      return { kind: "blocks", blocks };
    }
    default:
      return undefined;
  }
}

/** The pieces a call adds: its `markdown_text` and its `chunks`, or a Slack error code. */
function readPieces(args: Args, conflicts: string[]): StreamItem[] | { error: string } {
  const markdown = text(args, "markdown_text");
  if (markdown !== undefined && conflicts.some((key) => args[key] !== undefined)) {
    return { error: "markdown_text_conflict" };
  }
  const items: StreamItem[] = markdown === undefined ? [] : [{ kind: "markdown", text: markdown }];
  const chunks = args.chunks;
  if (chunks !== undefined) {
    if (!Array.isArray(chunks)) return { error: "invalid_chunks" };
    for (const chunk of chunks) {
      const item = readChunk(chunk);
      if (item === undefined) return { error: "invalid_chunks" };
      items.push(item);
    }
  }
  return items;
}

function markdownChars(items: StreamItem[]): number {
  return items.reduce((n, item) => n + (item.kind === "markdown" ? item.text.length : 0), 0);
}

/** Adds `pieces` to the stream: Markdown runs on, a task card changes where it first showed. */
function absorb(stream: StreamState, pieces: StreamItem[]): void {
  for (const piece of pieces) {
    const task =
      piece.kind === "task"
        ? stream.items.find((item) => item.kind === "task" && item.id === piece.id)
        : undefined;
    if (task?.kind === "task" && piece.kind === "task") {
      task.title = piece.title;
      task.status = piece.status;
      if (piece.details !== undefined) task.details = (task.details ?? "") + piece.details;
      if (piece.output !== undefined) task.output = piece.output;
    } else {
      stream.items.push({ ...piece });
    }
  }
}

/** The blocks a streamed message shows: its Markdown, task cards and blocks, then the end's. */
function render(message: StoredMessage, stream: StreamState): void {
  const blocks: Block[] = [];
  let markdown = "";
  for (const item of stream.items) {
    const last = blocks.at(-1);
    if (item.kind === "markdown") {
      markdown += item.text;
      if (last?.type === "markdown") last.text = `${last.text as string}${item.text}`;
      else blocks.push({ type: "markdown", text: item.text });
    } else if (item.kind === "task") {
      const { kind: _kind, id, ...card } = item;
      blocks.push({ type: "task_card", task_id: id, ...card });
    } else if (item.kind === "plan") {
      blocks.push({ type: "plan", title: item.title });
    } else {
      blocks.push(...item.blocks);
    }
  }
  message.text = markdown;
  message.blocks = [...blocks, ...stream.endBlocks];
}

/** The stream of `message`, its state brought up to `now` (an idle stream expires). */
export function streamOf(message: StoredMessage, now: number): StreamState | undefined {
  const stream = message.stream;
  if (stream?.state === "streaming" && now - stream.lastAppendAt >= STREAM_EXPIRY_MS) {
    stream.state = "expired";
  }
  return stream;
}

/** The streaming message an append or stop names, or the error Slack answers. */
function live(
  ws: StreamWorkspace,
  args: Args,
): { message: StoredMessage; stream: StreamState } | Body {
  const channel = text(args, "channel");
  if (channel === undefined) return fail("channel_not_found");
  const ts = text(args, "ts");
  const message = ts === undefined ? undefined : ws.store.find(channel, ts);
  if (message === undefined) return fail("message_not_found");
  if (message.bot_id !== ws.botId) return fail("cant_update_message");
  const stream = streamOf(message, ws.now());
  if (stream?.state === "stopped_by_user") return fail("stopped_by_user");
  if (stream?.state !== "streaming") return fail("message_not_in_streaming_state");
  return { message, stream };
}

/** Applies `pieces` within the size cap; an error code when they do not fit. */
function grow(message: StoredMessage, stream: StreamState, pieces: StreamItem[]): Body {
  if (markdownChars(stream.items) + markdownChars(pieces) > MAX_MARKDOWN_CHARS) {
    return fail("msg_too_long");
  }
  absorb(stream, pieces);
  render(message, stream);
  return { ok: true, channel: message.channel, ts: message.ts };
}

/** Renders the message and stamps the change on the workspace's timeline. */
function show(ws: StreamWorkspace, message: StoredMessage, stream: StreamState): void {
  render(message, stream);
  ws.store.streamed(message);
}

export function startStream(ws: StreamWorkspace, args: Args): Body {
  const channel = text(args, "channel");
  if (channel === undefined) return fail("channel_not_found");
  if (ws.streamsRefused.has(channel)) return fail("channel_type_not_supported");
  const user = text(args, "recipient_user_id");
  const team = text(args, "recipient_team_id");
  // In a DM the recipient is known; anywhere else the live text needs one (documented).
  if (!channel.startsWith("D")) {
    if (user === undefined) return fail("missing_recipient_user_id");
    if (team === undefined) return fail("missing_recipient_team_id");
  }
  const pieces = readPieces(args, ["text", "blocks"]);
  if ("error" in pieces) return fail(pieces.error);
  if (pieces.length === 0) return fail("no_text");
  const stream: StreamState = {
    state: "streaming",
    lastAppendAt: ws.now(),
    recipient: user === undefined || team === undefined ? undefined : { user, team },
    items: [],
    endBlocks: [],
  };
  if (markdownChars(pieces) > MAX_MARKDOWN_CHARS) return fail("msg_too_long");
  const threadTs = text(args, "thread_ts");
  const message = ws.store.add({
    channel,
    text: "",
    user: ws.botUserId,
    bot_id: ws.botId,
    ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
  });
  message.stream = stream;
  absorb(stream, pieces);
  show(ws, message, stream);
  message.history = [{ text: message.text, blocks: message.blocks ?? [] }];
  return { ok: true, channel, ts: message.ts };
}

export function appendStream(ws: StreamWorkspace, args: Args): Body {
  const found = live(ws, args);
  if ("ok" in found) return found;
  const pieces = readPieces(args, ["text", "blocks"]);
  if ("error" in pieces) return fail(pieces.error);
  if (pieces.length === 0) return fail("no_text");
  const answer = grow(found.message, found.stream, pieces);
  if (answer.ok) {
    found.stream.lastAppendAt = ws.now();
    ws.store.streamed(found.message);
  }
  return answer;
}

/** `metadata` is read by methods.ts (undefined: none given), like a post's. */
export function stopStream(
  ws: StreamWorkspace,
  args: Args,
  metadata: Record<string, unknown> | undefined,
): Body {
  const found = live(ws, args);
  if ("ok" in found) return found;
  const pieces = readPieces(args, ["text"]);
  if ("error" in pieces) return fail(pieces.error);
  const end = parseBlocks(args.blocks);
  if (end !== undefined && !Array.isArray(end)) return fail(end.error);
  if (end !== undefined && end.length > MAX_BLOCKS) return fail("invalid_blocks");
  if (end !== undefined && tablesError(end) !== undefined) return fail("invalid_blocks");
  const { message, stream } = found;
  const answer = grow(message, stream, pieces);
  if (!answer.ok) return answer;
  stream.state = "stopped";
  stream.endBlocks = end ?? [];
  if (metadata !== undefined) message.metadata = metadata;
  show(ws, message, stream);
  return { ...answer, message: { ts: message.ts, text: message.text, streaming_state: "stopped" } };
}

/** The person presses stop on the streaming message: later calls get `stopped_by_user`. */
export function stopAsUser(message: StoredMessage, now: number): boolean {
  const stream = streamOf(message, now);
  if (stream?.state !== "streaming") return false;
  stream.state = "stopped_by_user";
  return true;
}
