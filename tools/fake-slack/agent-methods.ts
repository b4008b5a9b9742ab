/**
 * The fake's agent surface: `assistant.threads.*` (status line, suggested prompts, title) and
 * `agents.sessions.*` (session state and title), with the state a test asserts on. Each
 * method checks its arguments as Slack documents them; where Slack names no error code for
 * a bad argument the fake answers `invalid_arguments`.
 */
/** Decoded arguments and Slack's answer, as in methods.ts (which imports this file). */
type Args = Record<string, unknown>;
type SlackBody = { ok: boolean; error?: string; [key: string]: unknown };

/** Slack drops a status line set this long ago when no message came since, ms. */
export const STATUS_TTL_MS = 120_000;
const MAX_LOADING_MESSAGES = 10;
const MAX_PROMPTS = 4;
const TITLE_MAX = 200;
const SESSION_STATUSES = new Set(["active", "processing", "suspended", "closed"]);

/** A thread's status line as Slack shows it. */
export interface StatusLineState {
  status: string;
  loading_messages: string[];
  /** When it was set, ms. */
  at: number;
}

/** A thread's agent session. */
export interface SessionState {
  status: string;
  title: string | undefined;
  initiator: string | undefined;
  /** Every status it was set to, in order, the first (its creation) included. */
  history: string[];
}

export interface PromptsState {
  title: string | undefined;
  prompts: { title: string; message: string }[];
}

/**
 * Which assistant experience the app declares: `agent` (`features.agent_view`, Slack's default
 * since 2026), where setSuggestedPrompts with a `thread_ts` silently does nothing, or the
 * legacy `assistant` view, where prompts belong to a thread.
 */
export type AssistantView = "agent" | "assistant";

export class AgentState {
  readonly statusLines = new Map<string, StatusLineState>();
  readonly sessions = new Map<string, SessionState>();
  /** By channel (agent view) or channel and thread (assistant view). */
  readonly prompts = new Map<string, PromptsState>();
  readonly titles = new Map<string, string>();

  constructor(
    readonly now: () => number,
    readonly view: AssistantView,
  ) {}

  /** The app replied in the thread: Slack clears its status line. */
  replied(channel: string, threadTs: string): void {
    this.statusLines.delete(threadKey(channel, threadTs));
  }

  clear(): void {
    this.statusLines.clear();
    this.sessions.clear();
    this.prompts.clear();
    this.titles.clear();
  }
}

export function threadKey(channel: string, threadTs: string | undefined): string {
  return threadTs === undefined ? channel : `${channel}\u0000${threadTs}`;
}

function fail(error: string): SlackBody {
  return { ok: false, error };
}

function text(args: Args, key: string): string | undefined {
  const value = args[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
}

interface Where {
  channel: string;
  threadTs: string;
}

/** channel_id and thread_ts, both required, with Slack's error codes. */
function thread(args: Args): Where | SlackBody {
  const channel = text(args, "channel_id");
  if (channel === undefined) return fail("channel_not_found");
  const threadTs = text(args, "thread_ts");
  if (threadTs === undefined) return fail("invalid_thread_ts");
  return { channel, threadTs };
}

export function setStatus(state: AgentState, args: Args): SlackBody {
  const where = thread(args);
  if ("ok" in where) return where;
  // "" is a status too: it clears the line.
  if (typeof args.status !== "string") return fail("invalid_arguments");
  const loading = args.loading_messages === undefined ? [] : strings(args.loading_messages);
  if (loading === undefined || loading.length > MAX_LOADING_MESSAGES) {
    return fail("invalid_arguments");
  }
  const key = threadKey(where.channel, where.threadTs);
  if (args.status === "") state.statusLines.delete(key);
  else {
    state.statusLines.set(key, {
      status: args.status,
      loading_messages: loading,
      at: state.now(),
    });
  }
  return { ok: true };
}

export function setSuggestedPrompts(state: AgentState, args: Args): SlackBody {
  const channel = text(args, "channel_id");
  if (channel === undefined) return fail("channel_not_found");
  const prompts = args.prompts;
  const valid =
    Array.isArray(prompts) &&
    prompts.length > 0 &&
    prompts.length <= MAX_PROMPTS &&
    prompts.every(
      (p: unknown) =>
        typeof p === "object" &&
        p !== null &&
        typeof (p as { title?: unknown }).title === "string" &&
        (p as { title: string }).title !== "" &&
        typeof (p as { message?: unknown }).message === "string" &&
        (p as { message: string }).message !== "",
    );
  if (!valid) return fail("invalid_arguments");
  const threadTs = text(args, "thread_ts");
  // Slack's reference: an agent app naming a thread sees its call succeed and do nothing.
  if (state.view === "agent" && threadTs !== undefined) return { ok: true };
  if (state.view === "assistant" && threadTs === undefined) return fail("invalid_thread_ts");
  state.prompts.set(threadKey(channel, threadTs), {
    title: text(args, "title"),
    prompts: (prompts as { title: string; message: string }[]).map(({ title, message }) => ({
      title,
      message,
    })),
  });
  return { ok: true };
}

export function setTitle(state: AgentState, args: Args): SlackBody {
  const where = thread(args);
  if ("ok" in where) return where;
  const title = text(args, "title");
  if (title === undefined) return fail("invalid_arguments");
  state.titles.set(threadKey(where.channel, where.threadTs), title);
  return { ok: true };
}

function sessionTitle(args: Args, required: boolean): string | undefined | SlackBody {
  const title = text(args, "title");
  if (title === undefined) return required ? fail("invalid_arguments") : undefined;
  return title.length > TITLE_MAX ? fail("invalid_arguments") : title;
}

/** Sets a session's status, creating it (with its title and initiator) when it is new. */
export function setSessionStatus(state: AgentState, args: Args): SlackBody {
  const channel = text(args, "channel_id");
  if (channel === undefined) return fail("channel_not_found");
  const status = text(args, "status");
  if (status === undefined || !SESSION_STATUSES.has(status)) return fail("invalid_arguments");
  // The fake knows only thread sessions (in channels and DMs), which need their thread.
  const threadTs = text(args, "thread_ts");
  if (threadTs === undefined) return fail("invalid_arguments");
  const title = sessionTitle(args, false);
  if (typeof title === "object") return title;
  const key = threadKey(channel, threadTs);
  const session = state.sessions.get(key);
  if (session === undefined) {
    state.sessions.set(key, {
      status,
      title,
      initiator: text(args, "initiator_user_id"),
      history: [status],
    });
  } else {
    // Title and initiator count only when the call creates the session.
    session.status = status;
    session.history.push(status);
  }
  return { ok: true };
}

export function renameSession(state: AgentState, args: Args): SlackBody {
  const channel = text(args, "channel_id");
  if (channel === undefined) return fail("channel_not_found");
  const title = sessionTitle(args, true);
  if (typeof title === "object") return title;
  const session = state.sessions.get(threadKey(channel, text(args, "thread_ts")));
  if (session === undefined) return fail("session_not_found");
  session.title = title;
  return { ok: true, title };
}
