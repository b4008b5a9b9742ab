import type { RunStreamUpdate } from "../service/run-stream.js";
import type { Message, Run, RunStartBody, Thread } from "../service/schemas.js";

/**
 * The small interfaces the bridge talks to. The bridge knows neither Bolt nor undici:
 * the Slack side implements ReplySink, the service client implements AssistantService.
 */

export interface CallOptions {
  signal?: AbortSignal;
  /** Fairness key in the service budget: the Slack person the call is for. */
  party?: string;
  onQueued?: (p: { position: number; expectedWaitMs: number }) => void;
}

export interface AssistantService {
  openThread(body: { assistantId: string; title?: string }, opts?: CallOptions): Promise<Thread>;
  postMessage(threadId: string, body: { content: string }, opts?: CallOptions): Promise<Message>;
  /** `body` as a function is read when the start leaves the budget queue. */
  startRun(
    threadId: string,
    body: RunStartBody | (() => RunStartBody),
    opts?: CallOptions,
  ): Promise<Run>;
  getRun(runId: string, opts?: CallOptions): Promise<Run>;
  streamRun(runId: string, opts?: CallOptions): AsyncGenerator<RunStreamUpdate>;
  stopRun(runId: string, opts?: CallOptions): Promise<Run | undefined>;
  listMessages(threadId: string, opts?: CallOptions): Promise<Message[]>;
}

/** What a reply shows besides the answer text. */
export type ReplyPhase =
  | { kind: "queued"; ahead: number }
  | { kind: "starting" }
  | { kind: "working" }
  | { kind: "retrying"; note: string }
  | { kind: "completed"; modelUsed?: string }
  | { kind: "failed"; error: string; modelUsed?: string }
  | { kind: "stopped"; by?: string; modelUsed?: string }
  | { kind: "unreachable"; message: string };

export interface ReplyView {
  /** The answer's Markdown: written so far (interim) or complete (final). */
  body: string;
  phase: ReplyPhase;
  notes: string[];
}

/** Where a turn's reply is shown. One per turn; the Slack side owns the messages. */
export interface Reply {
  /** Posts the placeholder if the turn has none yet; resolves once it is visible. */
  open(view: ReplyView): Promise<void>;
  /** Shows progress; paced and coalesced by the sink (the latest view wins). */
  show(view: ReplyView): void;
  /** The end state; resolves once Slack shows it (or it failed for good). */
  finish(view: ReplyView): Promise<void>;
}

export interface ReplyTarget {
  turnId: string;
  team: string;
  channel: string;
  threadTs: string;
  /** Reply messages already posted for this turn (after a restart), in order. */
  parts: string[];
  /**
   * A post of the first reply message was sent before (a crash may have kept its ts from
   * being recorded): the sink looks for it in the thread before posting another.
   */
  postAttempted?: boolean;
}

/** What the sink tells its owner, to be recorded on the turn. */
export interface ReplyRecorder {
  /** The list of the turn's reply messages changed. */
  parts(parts: string[]): void;
  /** The first reply message is about to be posted. */
  posting(): void;
}

export interface ReplySink {
  reply(target: ReplyTarget, recorder: ReplyRecorder): Reply;
}

/** One message of a Slack thread, as the thread context sees it (no Slack markup left). */
export interface ThreadMessage {
  /** Slack ts; orders the thread. */
  ts: string;
  /** Who wrote it, as people see them (display name, or the id when unknown). */
  author: string;
  /** Readable text: mentions as `@name`, links as `label (url)`, entities decoded. */
  text: string;
  /** Names of attached files (their content is never passed on). */
  files: string[];
  /** Written by this bot (its replies, a question it posted): never passed on. */
  bySelf: boolean;
}

export interface ThreadHistoryRequest {
  team: string;
  channel: string;
  threadTs: string;
  /** Only messages after this ts are needed (exclusive); null: the whole thread. */
  after: string | null;
  /** The person asking, whose display name the question is labelled with. */
  asker: string;
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
