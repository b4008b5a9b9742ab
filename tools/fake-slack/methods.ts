/**
 * The fake's Web API methods: each takes the decoded arguments and answers with Slack's
 * body (`{ok: true, …}` or `{ok: false, error}`), changing the workspace as Slack would.
 * Transport, recording, rate limits and fault injection live in server.ts.
 */

import * as agent from "./agent-methods.js";
import {
  type Block,
  contentError,
  MAX_MARKDOWN_CHARS,
  type MessageContent,
  parseBlocks,
} from "./blocks.js";
import type { FakeSlackMethod } from "./limits.js";
import type { MessageStore, StoredMessage } from "./messages.js";
import { appendStream, startStream, stopStream, streamOf } from "./streams.js";
import { openProblem, publishView, readView, type ViewState } from "./views.js";

export interface SeedUser {
  id: string;
  name: string;
  real_name?: string;
  display_name?: string;
  /** Their own workspace; default the fake's. */
  team_id?: string;
  /** Their Enterprise org (`enterprise_user.enterprise_id`); default none. */
  enterprise_id?: string;
  /** A multi-channel guest. */
  is_restricted?: boolean;
  /** A single-channel guest. */
  is_ultra_restricted?: boolean;
  /** A workspace admin. */
  is_admin?: boolean;
  /** A workspace owner. */
  is_owner?: boolean;
}

export interface EphemeralMessage {
  channel: string;
  user: string;
  text: string;
  blocks?: Block[];
  thread_ts?: string;
  message_ts: string;
}

export interface OpenedView {
  id: string;
  trigger_id: string;
  view: Record<string, unknown>;
}

export interface ThreadStatus {
  channel_id: string;
  thread_ts: string;
  status: string;
  /** As the call gave them; absent when it gave none. */
  loading_messages?: string[];
}

/** Everything the methods read and change; owned by FakeSlack. */
export interface Workspace {
  readonly teamId: string;
  /** The workspace's Enterprise org, when it is in one. */
  readonly enterpriseId: string | undefined;
  readonly botUserId: string;
  readonly botId: string;
  readonly store: MessageStore;
  readonly users: Map<string, SeedUser>;
  readonly ephemerals: EphemeralMessage[];
  readonly views: OpenedView[];
  /** Triggers used and Home tabs published (views.ts). */
  readonly viewState: ViewState;
  readonly statuses: ThreadStatus[];
  /** The status lines, agent sessions, prompts and titles Slack shows (agent-methods.ts). */
  readonly agent: agent.AgentState;
  /** The fake's clock, ms since the epoch (stream expiry). */
  readonly now: () => number;
  /** Channels where `chat.startStream` answers `channel_type_not_supported`. */
  readonly streamsRefused: Set<string>;
  /** A fresh Socket Mode URL, or undefined when the fake runs without Socket Mode. */
  socketUrl(): string | undefined;
  /** What `auth.test` answers for the bot token of this workspace. */
  authTest(): SlackBody;
  /** A shared file's object, with its URLs, when this workspace may see it (`files.info`). */
  fileInfo(id: string): Record<string, unknown> | undefined;
}

/** Which kind of token the call carried; its value is never kept. */
export type TokenKind = "none" | "app" | "other";

export type Args = Record<string, unknown>;
export type SlackBody = { ok: boolean; error?: string; [key: string]: unknown };

const PAGE_MAX = 1000;

function fail(error: string): SlackBody {
  return { ok: false, error };
}

/** A string argument; form bodies deliver numbers and booleans as strings too. */
function arg(args: Args, key: string): string | undefined {
  const value = args[key];
  if (typeof value === "string") return value === "" ? undefined : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/**
 * The message content of a post or an edit; `previous` keeps what Slack keeps when an edit
 * leaves `text` or `blocks` out (an empty `blocks` array removes them).
 */
function readContent(args: Args, previous?: MessageContent): MessageContent | { error: string } {
  const markdown = arg(args, "markdown_text");
  const text = arg(args, "text");
  const parsed = parseBlocks(args.blocks);
  if (parsed !== undefined && !Array.isArray(parsed)) return parsed;
  if (markdown !== undefined) {
    if (text !== undefined || parsed !== undefined) return { error: "markdown_text_conflict" };
    if (markdown.length > MAX_MARKDOWN_CHARS) return { error: "msg_too_long" };
    return { text: markdown };
  }
  if (text === undefined && parsed === undefined) return { error: "no_text" };
  const blocks = parsed ?? previous?.blocks;
  const content: MessageContent = { text: text ?? previous?.text ?? "" };
  if (blocks !== undefined && blocks.length > 0) content.blocks = blocks;
  if (previous === undefined && content.text === "" && content.blocks === undefined) {
    return { error: "no_text" };
  }
  const error = contentError(content);
  return error === undefined ? content : { error };
}

/**
 * The `metadata` argument (a JSON string in form bodies): undefined when absent, a Slack
 * error code when it is not an object with an `event_type`.
 */
function readMetadata(args: Args): { metadata?: Record<string, unknown> } | { error: string } {
  let value = args.metadata;
  if (value === undefined || value === "") return {};
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return { error: "invalid_metadata_format" };
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { error: "invalid_metadata_format" };
  }
  const metadata = value as Record<string, unknown>;
  if (typeof metadata.event_type !== "string") return { error: "invalid_metadata_schema" };
  return { metadata };
}

/** Whether a boolean argument is set (form bodies deliver "true"). */
function flag(args: Args, key: string): boolean {
  return arg(args, key) === "true" || arg(args, key) === "1";
}

/** A message as Slack's API returns it; its metadata only when asked for. */
function wire(
  message: StoredMessage,
  teamId: string,
  withMetadata = false,
): Record<string, unknown> {
  const out: Record<string, unknown> = { type: "message", ts: message.ts, text: message.text };
  if (message.user !== undefined) out.user = message.user;
  if (message.bot_id !== undefined) out.bot_id = message.bot_id;
  if (message.thread_ts !== undefined) out.thread_ts = message.thread_ts;
  if (message.blocks !== undefined) out.blocks = message.blocks;
  if (message.files !== undefined) out.files = message.files;
  if (message.edits > 0) out.edited = { user: message.user, ts: message.ts };
  if (withMetadata && message.metadata !== undefined) out.metadata = message.metadata;
  out.team = message.user_team ?? teamId;
  if (message.user_team !== undefined) {
    out.user_team = message.user_team;
    out.source_team = message.user_team;
  }
  return out;
}

function postMessage(ws: Workspace, args: Args): SlackBody {
  const channel = arg(args, "channel");
  if (channel === undefined) return fail("channel_not_found");
  const content = readContent(args);
  if ("error" in content) return fail(content.error);
  const marked = readMetadata(args);
  if ("error" in marked) return fail(marked.error);
  const threadTs = arg(args, "thread_ts");
  const message = ws.store.add({
    ...content,
    channel,
    user: ws.botUserId,
    bot_id: ws.botId,
    ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
    ...marked,
  });
  if (threadTs !== undefined) ws.agent.replied(channel, threadTs);
  return { ok: true, channel, ts: message.ts, message: wire(message, ws.teamId) };
}

function ownMessage(ws: Workspace, args: Args, tsKey: string, notMine: string) {
  const channel = arg(args, "channel");
  if (channel === undefined) return fail("channel_not_found");
  const ts = arg(args, tsKey);
  const message = ts === undefined ? undefined : ws.store.find(channel, ts);
  if (message === undefined) return fail("message_not_found");
  if (message.bot_id !== ws.botId) return fail(notMine);
  return message;
}

function update(ws: Workspace, args: Args): SlackBody {
  const message = ownMessage(ws, args, "ts", "cant_update_message");
  if ("ok" in message) return message;
  // Unconfirmed for Slack: the fake refuses to edit a message still streaming, so that the
  // bot's order (stop the stream, then edit) is what the tests see.
  if (streamOf(message, ws.now())?.state === "streaming") return fail("cant_update_message");
  const content = readContent(args, message);
  if ("error" in content) return fail(content.error);
  const marked = readMetadata(args);
  if ("error" in marked) return fail(marked.error);
  ws.store.edit(message, content);
  // An edit without metadata keeps the message's (unconfirmed for Slack; the bot sends its
  // mark with every edit, so it does not rely on either behaviour).
  if (marked.metadata !== undefined) message.metadata = marked.metadata;
  return {
    ok: true,
    channel: message.channel,
    ts: message.ts,
    text: message.text,
    message: wire(message, ws.teamId),
  };
}

function postEphemeral(ws: Workspace, args: Args): SlackBody {
  const channel = arg(args, "channel");
  if (channel === undefined) return fail("channel_not_found");
  const user = arg(args, "user");
  if (user === undefined) return fail("user_not_in_channel");
  const content = readContent(args);
  if ("error" in content) return fail(content.error);
  const threadTs = arg(args, "thread_ts");
  const ephemeral: EphemeralMessage = { channel, user, ...content, message_ts: ws.store.nextTs() };
  if (threadTs !== undefined) ephemeral.thread_ts = threadTs;
  ws.ephemerals.push(ephemeral);
  return { ok: true, message_ts: ephemeral.message_ts };
}

function deleteMessage(ws: Workspace, args: Args): SlackBody {
  const message = ownMessage(ws, args, "ts", "cant_delete_message");
  if ("ok" in message) return message;
  ws.store.remove(message.channel, message.ts);
  return { ok: true, channel: message.channel, ts: message.ts };
}

function getPermalink(ws: Workspace, args: Args): SlackBody {
  const channel = arg(args, "channel");
  if (channel === undefined) return fail("channel_not_found");
  const ts = arg(args, "message_ts");
  if (ts === undefined || ws.store.find(channel, ts) === undefined) {
    return fail("message_not_found");
  }
  return {
    ok: true,
    channel,
    permalink: `https://fake.slack/archives/${channel}/p${ts.replace(".", "")}`,
  };
}

function replies(ws: Workspace, args: Args): SlackBody {
  const channel = arg(args, "channel");
  if (channel === undefined) return fail("channel_not_found");
  const ts = arg(args, "ts");
  const thread = ts === undefined ? [] : ws.store.thread(channel, ts);
  if (ts === undefined || thread.length === 0) return fail("thread_not_found");
  const limit = Math.min(PAGE_MAX, Math.max(1, Number(arg(args, "limit") ?? PAGE_MAX) || PAGE_MAX));
  let start = 0;
  const cursor = arg(args, "cursor");
  if (cursor !== undefined) {
    const decoded = Buffer.from(cursor, "base64").toString("utf8");
    start = thread.findIndex((m) => `next_ts:${m.ts}` === decoded);
    if (start < 0) return fail("invalid_cursor");
  }
  const page = thread.slice(start, start + limit);
  const next = thread[start + limit];
  const replyCount = thread.filter((m) => m.ts !== ts).length;
  const withMetadata = flag(args, "include_all_metadata");
  const messages = page.map((m) => {
    const out = wire(m, ws.teamId, withMetadata);
    if (m.ts === ts && replyCount > 0)
      Object.assign(out, { thread_ts: ts, reply_count: replyCount });
    return out;
  });
  return {
    ok: true,
    messages,
    has_more: next !== undefined,
    response_metadata: {
      next_cursor: next === undefined ? "" : Buffer.from(`next_ts:${next.ts}`).toString("base64"),
    },
  };
}

function usersInfo(ws: Workspace, args: Args): SlackBody {
  const id = arg(args, "user");
  const user = id === undefined ? undefined : ws.users.get(id);
  if (user === undefined) return fail("user_not_found");
  const realName = user.real_name ?? user.name;
  const enterprise = user.enterprise_id;
  return {
    ok: true,
    user: {
      id: user.id,
      team_id: user.team_id ?? ws.teamId,
      name: user.name,
      real_name: realName,
      deleted: false,
      is_bot: user.id === ws.botUserId,
      is_restricted: user.is_restricted ?? false,
      is_ultra_restricted: user.is_ultra_restricted ?? false,
      is_admin: user.is_admin ?? false,
      is_owner: user.is_owner ?? false,
      is_primary_owner: false,
      profile: { display_name: user.display_name ?? "", real_name: realName },
      ...(enterprise === undefined ? {} : { enterprise_user: { enterprise_id: enterprise } }),
    },
  };
}

function viewsOpen(ws: Workspace, args: Args): SlackBody {
  const triggerId = arg(args, "trigger_id");
  const view = readView(args);
  const refused = openProblem(ws.viewState, triggerId, view);
  if (refused !== undefined || triggerId === undefined || view === undefined) {
    return refused ?? fail("invalid_arguments");
  }
  const opened: OpenedView = {
    id: `V${String(ws.views.length + 1).padStart(8, "0")}`,
    trigger_id: triggerId,
    view: view as Record<string, unknown>,
  };
  ws.views.push(opened);
  return { ok: true, view: { ...opened.view, id: opened.id, team_id: ws.teamId } };
}

function setStatus(ws: Workspace, args: Args): SlackBody {
  const body = agent.setStatus(ws.agent, args);
  if (body.ok) {
    const { channel_id, thread_ts, status, loading_messages } = args as Record<string, unknown>;
    const call: ThreadStatus = {
      channel_id: String(channel_id),
      thread_ts: String(thread_ts),
      status: String(status),
    };
    if (Array.isArray(loading_messages)) call.loading_messages = loading_messages.map(String);
    ws.statuses.push(call);
  }
  return body;
}

function connectionsOpen(ws: Workspace): SlackBody {
  const url = ws.socketUrl();
  // Not a Slack error code: says that the fake was started without `socketMode: true`.
  return url === undefined ? fail("socket_mode_not_enabled") : { ok: true, url };
}

const HANDLERS: Record<FakeSlackMethod, (ws: Workspace, args: Args) => SlackBody> = {
  "auth.test": (ws) => ws.authTest(),
  "chat.postMessage": postMessage,
  "chat.update": update,
  "chat.postEphemeral": postEphemeral,
  "chat.delete": deleteMessage,
  "chat.getPermalink": getPermalink,
  "conversations.replies": replies,
  "users.info": usersInfo,
  "views.open": viewsOpen,
  "views.publish": (ws, args) => publishView(ws.viewState, args, ws.users, ws.teamId),
  "apps.connections.open": connectionsOpen,
  "assistant.threads.setStatus": setStatus,
  "assistant.threads.setSuggestedPrompts": (ws, args) => agent.setSuggestedPrompts(ws.agent, args),
  "assistant.threads.setTitle": (ws, args) => agent.setTitle(ws.agent, args),
  "agents.sessions.setStatus": (ws, args) => agent.setSessionStatus(ws.agent, args),
  "agents.sessions.rename": (ws, args) => agent.renameSession(ws.agent, args),
  "files.info": (ws, args) => {
    const file = ws.fileInfo(arg(args, "file") ?? "");
    return file ? { ok: true, file } : fail("file_not_found");
  },
  "chat.startStream": startStream,
  "chat.appendStream": appendStream,
  "chat.stopStream": (ws, args) => {
    const marked = readMetadata(args);
    return "error" in marked ? fail(marked.error) : stopStream(ws, args, marked.metadata);
  },
};

export function isFakeSlackMethod(method: string): method is FakeSlackMethod {
  return Object.hasOwn(HANDLERS, method);
}

/**
 * Answers one call. Token rules follow Slack: no token is `not_authed`; only an app-level
 * token (`xapp-…`) may open a socket connection, and it may do nothing else.
 */
export function callMethod(ws: Workspace, method: string, args: Args, token: TokenKind): SlackBody {
  if (!isFakeSlackMethod(method)) return fail("unknown_method");
  if (token === "none") return fail("not_authed");
  const wantsApp = method === "apps.connections.open";
  if (wantsApp !== (token === "app")) return fail("not_allowed_token_type");
  return HANDLERS[method](ws, args);
}
