import type { SharedFile } from "../files/kinds.js";
import type { ReadFiles } from "../files/reader.js";
import type { RunSettings } from "../store/stores.js";

/**
 * The small interfaces the bridge talks to. The bridge knows neither Bolt nor undici: the
 * service client implements AssistantService, the Slack side ReplyStrategy and ThreadHistory.
 * The shapes of the service's resources are declared here, as much of them as the bridge
 * reads; the client's parsed resources (service/schemas.ts) have them.
 */

export interface BridgeLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Where a call stands in the service's budget while it waits: its place, its expected wait. */
export interface QueueInfo {
  position: number;
  expectedWaitMs: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Fairness key in the service budget: the Slack person the call is for. */
  party?: string;
  /** The workspace (installation) of `party`: a person's own token is linked in one. */
  workspace?: string;
  /**
   * Whose the call's service thread is (conversation.serviceThreadOwner), when known: the
   * service answers a thread only to the token that created it, so the call is sent with
   * that identity, or not at all (a failure of kind `authentication` with `threadOwner`).
   */
  threadOwner?: string;
  onQueued?: (p: QueueInfo) => void;
  /**
   * Called once the request has its connection (after its wait in the budget and its
   * connection's opening); nothing is written to it until what it returns has resolved: what
   * it records is kept before the service can act. If it throws or rejects, nothing is sent.
   * `identity` is whom the request is sent as: "shared", or the person whose own token it carries.
   */
  onSend?: (sent: { identity: string }) => void | Promise<void>;
}

/** Who a conversation's service call is for: the asker, and whose the service thread is. */
export type Caller = Pick<CallOptions, "party" | "workspace" | "threadOwner">;

export type RunStatus = "queued" | "in_progress" | "completed" | "failed" | "canceled";

/** A run as the service reports it; the answer is the text of its first output item. */
export interface Run {
  id: string;
  status: RunStatus;
  output?: { text?: string | null | undefined }[] | null | undefined;
  modelUsed?: string | null | undefined;
  error?: string | null | undefined;
}

export type RunStartBody = { triggerMessageId: string } & RunSettings;

/** What a run's event stream says, in the order it says it; `end` is always last. */
export type RunProgress =
  | { type: "text"; text: string }
  | { type: "status"; status: RunStatus }
  | { type: "run"; run: Run }
  /** A step of the run began or changed: the whole step as it now is. */
  | { type: "step"; step: ReplyStep }
  | { type: "end"; reason: "done" | "eof" | "idle" };

export interface AssistantService {
  openThread(
    body: { assistantId: string; title?: string },
    opts?: CallOptions,
  ): Promise<{ id: string }>;
  postMessage(
    threadId: string,
    body: { content: string },
    opts?: CallOptions,
  ): Promise<{ id: string }>;
  /** `body` as a function is read when the start leaves the budget queue. */
  startRun(
    threadId: string,
    body: RunStartBody | (() => RunStartBody | Promise<RunStartBody>),
    opts?: CallOptions,
  ): Promise<Run>;
  getRun(runId: string, opts?: CallOptions): Promise<Run>;
  streamRun(runId: string, opts?: CallOptions): AsyncGenerator<RunProgress>;
  stopRun(runId: string, opts?: CallOptions): Promise<Run | undefined>;
  /**
   * Calls for `caller` that will come within two seconds (a turn just accepted), by the
   * budget they take: `request` (threads, messages, streams) and `run_start`. A budget kept in
   * a database takes their slots ahead. Nothing is sent.
   */
  expect?(calls: { request?: number; run_start?: number }, caller: Caller): void;
  listMessages(
    threadId: string,
    opts?: CallOptions,
  ): Promise<
    { id: string; content?: string | null | undefined; role?: string | null | undefined }[]
  >;
}

/** What a reply shows besides the answer text. */
export type ReplyPhase =
  /**
   * Waiting: behind earlier turns of the same Slack thread (`thread`), or in the service's
   * run-start budget (`service`); `ahead` counts that queue.
   */
  | { kind: "queued"; ahead: number; where: "thread" | "service" }
  | { kind: "starting" }
  | { kind: "working" }
  | { kind: "retrying"; note: string }
  | { kind: "completed"; modelUsed?: string }
  | { kind: "failed"; error: string; modelUsed?: string }
  | { kind: "stopped"; by?: string; modelUsed?: string }
  | { kind: "unreachable"; message: string };

/** One thing the assistant is doing, as the run's stream tells it (a step, a tool in use). */
export interface ReplyStep {
  /** Stable across updates of the same step. */
  id: string;
  title: string;
  status: "pending" | "in_progress" | "complete" | "error";
  /** A short line of detail (what the tool was asked, what it found), if any. */
  details?: string | undefined;
}

export interface ReplyView {
  /** The answer's Markdown: written so far (interim) or complete (final). */
  body: string;
  phase: ReplyPhase;
  notes: string[];
  /**
   * What the assistant is doing or did, in the order the steps began (empty when the stream
   * says nothing but text). A strategy shows it as it can: task updates in a native stream,
   * the status line otherwise.
   */
  steps?: ReplyStep[];
}

/**
 * One turn's reply as Slack shows it. A strategy renders it: paced `chat.update` edits today
 * (slack/replies/reply.ts), native streaming next; the bridge's TurnReply never knows which.
 */
export interface ReplyRenderer {
  /** Posts the placeholder if the turn has none yet; resolves once it is visible. */
  open(view: ReplyView): Promise<void>;
  /** Shows progress; paced and coalesced (the latest view wins). */
  show(view: ReplyView): void;
  /** The end state; resolves once Slack shows it (or it failed for good). */
  finish(view: ReplyView): Promise<void>;
  /**
   * Settles once the answer's run may start: its words would be shown soon after they are
   * written (the reply's first message is near). Absent: at once.
   */
  near?(): Promise<void>;
}

export interface ReplyTarget {
  turnId: string;
  team: string;
  channel: string;
  threadTs: string;
  /** Reply messages already posted for this turn (after a restart), in order. */
  parts: string[];
  /** The person who asked: a native stream's recipient in a channel. */
  asker?: string;
  /** The ts of the message answered: every reply message is newer. */
  askedTs?: string;
  /**
   * How many of the reply's messages had their post sent before (default: as many as
   * `parts`). When it is more than `parts.length`, the next part may be in Slack although a
   * crash kept its ts from being recorded: the strategy looks for it before posting it.
   */
  postsAttempted?: number;
  /**
   * Who asked what: Slack's agent surface names the thread's session after its first
   * question and credits the person who started it.
   */
  question?: {
    user: string;
    /** The question as readable text. */
    text: string;
    /** The question is the thread's first message (a new DM conversation, a top-level mention). */
    startsThread: boolean;
  };
}

/**
 * What a renderer tells its turn, to be recorded at once (store/turn.ts: reply events). Each
 * resolves once it is recorded: a post is sent only after its attempt is (so a retry after a
 * crash looks for it first), and a failure to record is the renderer's failure.
 */
export interface ReplyRecorder {
  /** The list of the turn's reply messages changed. */
  parts(parts: string[]): Promise<void>;
  /**
   * The reply message at index `part` (0: the placeholder) is about to be posted: resolves
   * once that is recorded for good (it would survive a power cut), when the post may go.
   */
  posting(part: number): Promise<void>;
}

export interface ReplyStrategy {
  /** The renderer of one turn's reply; what it posts is told to `recorder` at once. */
  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer;
}

/** One message of a Slack thread, as the thread context sees it (no Slack markup left). */
export interface ThreadMessage {
  /** Slack ts; orders the thread. */
  ts: string;
  /** Who wrote it, as people see them (display name, or the id when unknown). */
  author: string;
  /** Readable text: mentions as `@name`, links as `label (url)`, entities decoded. */
  text: string;
  /** The files shared with it, as Slack described them. */
  files: SharedFile[];
  /** Written by this bot (its replies, a question it posted): never passed on. */
  bySelf: boolean;
  /**
   * Left out by the rule of who the bot answers: its author is someone the bot does not
   * answer (`refused`: another organisation, a guest where guests are not answered), or
   * could not be checked in time (`unchecked`). Such a message is counted, never quoted:
   * the reader keeps only its ts, with no author, text or files.
   */
  withheld?: Withheld;
}

export type Withheld = "refused" | "unchecked";

export interface ThreadHistoryRequest {
  team: string;
  channel: string;
  threadTs: string;
  /** Only messages after this ts are needed (exclusive); null: the whole thread. */
  after: string | null;
  /** The person asking, whose display name the question is labelled with. */
  asker: string;
}

/** Reads the files shared with a question as text; the Slack side downloads them (files/). */
export interface SharedFilesReader {
  /** Never rejects: a file that cannot be read is in `unread`, with why. */
  read(team: string, files: readonly SharedFile[], signal?: AbortSignal): Promise<ReadFiles>;
}

/** Reads a thread's messages; the Slack side implements it on conversations.replies. */
export interface ThreadHistory {
  /**
   * The thread's messages in ts order (the parent first), at least those after `after`.
   * Rejects when the history cannot be read; the caller then answers without it.
   */
  read(
    request: ThreadHistoryRequest,
    signal?: AbortSignal,
  ): Promise<{ messages: ThreadMessage[]; askerName: string }>;
}
