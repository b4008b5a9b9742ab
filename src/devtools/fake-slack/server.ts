/**
 * A fake Slack Web API on 127.0.0.1 for end-to-end tests and benchmarks: point the bot's
 * `slackApiUrl` at `fake.apiUrl` and read back exactly what it did in Slack. It answers
 * like Slack (HTTP 200 with `ok`, 429 with Retry-After under its rate tiers), records every
 * call without ever keeping a token, and can inject faults.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { agentSessionStopped } from "../agent-events.js";
import {
  AgentState,
  type AssistantView,
  type PromptsState,
  type SessionState,
  STATUS_TTL_MS,
  type StatusLineState,
  threadKey,
} from "./agent-methods.js";
import { type MessageContent, visibleText } from "./blocks.js";
import { type FailOptions, FaultQueue } from "./faults.js";
import { type MethodLimits, RateLimits } from "./limits.js";
import {
  type MessageChange,
  MessageStore,
  type SeedMessage,
  type StoredMessage,
  type StreamState,
} from "./messages.js";
import {
  type Args,
  callMethod,
  type EphemeralMessage,
  type OpenedView,
  type SeedUser,
  type SlackBody,
  type ThreadStatus,
  type TokenKind,
  type Workspace,
} from "./methods.js";
import { type SocketModeServer, startSocketModeServer } from "./socket-mode-server.js";
import { stopAsUser, streamOf } from "./streams.js";
import type { ViewState } from "./views.js";
import { Waiters } from "./waiters.js";
import { decodeArgs, readBody, sendJson as send, tokenKind } from "./wire.js";

export type {
  AssistantView,
  EphemeralMessage,
  FailOptions,
  MessageChange,
  OpenedView,
  PromptsState,
  SeedMessage,
  SeedUser,
  SessionState,
  StatusLineState,
  StoredMessage,
  ThreadStatus,
};

export interface FakeSlackOptions {
  /** Default "T0001". */
  teamId?: string;
  /** The workspace's Enterprise org (`auth.test` enterprise_id); default none. */
  enterpriseId?: string;
  /** The bot's user id (`auth.test` user_id). Default "UBOT". */
  botUserId?: string;
  /** The bot's bot id, stamped on its messages. Default "BBOT". */
  botId?: string;
  /** Per-method overrides of the rate tiers, in calls per minute. */
  limits?: MethodLimits;
  /** `chat.postMessage` burst per channel before the 1/s refill applies. Default 3. */
  postBurst?: number;
  /** The clock, in ms since the epoch, for rate windows, ts values and `at`. Default Date.now. */
  now?: () => number;
  /** Answer over-limit calls with 429. Default true. */
  enforceLimits?: boolean;
  /** Also start a Socket Mode server that `apps.connections.open` hands out. Default false. */
  socketMode?: boolean;
  /** The assistant experience the app declares (agent-methods.ts). Default "agent". */
  assistantView?: AssistantView;
}

export interface RecordedCall {
  method: string;
  /** Arguments as decoded (JSON-string fields like `blocks` parsed), without the token. */
  args: Args;
  at: number;
  status: number;
  ok: boolean;
  error?: string;
  /** Whether a token came, in the Authorization header or the `token` field. */
  hadToken: boolean;
}

export interface RecordedResponse {
  id: string;
  body: unknown;
  at: number;
}

export class FakeSlack {
  readonly calls: RecordedCall[] = [];
  readonly responses: RecordedResponse[] = [];
  readonly ephemerals: EphemeralMessage[] = [];
  readonly views: OpenedView[] = [];
  /** Triggers used, and every Home tab published (`views.publish`), in order. */
  readonly viewState: ViewState = { usedTriggers: new Set(), published: [] };
  /** `assistant.threads.setStatus` calls, in order. */
  readonly statuses: ThreadStatus[] = [];
  private readonly store: MessageStore;
  private readonly users = new Map<string, SeedUser>();
  private readonly limits: RateLimits;
  private readonly faults = new FaultQueue();
  private readonly limitedBy = new Map<string, number>();
  private readonly responseIds = new Set<string>();
  private readonly waiters = new Waiters();
  private readonly workspace: Workspace;
  private readonly agent: AgentState;
  private readonly now: () => number;
  private readonly enforceLimits: boolean;
  private closed = false;

  private constructor(
    private readonly server: Server,
    private readonly socketServer: SocketModeServer | undefined,
    options: FakeSlackOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.enforceLimits = options.enforceLimits ?? true;
    this.store = new MessageStore(this.now);
    this.agent = new AgentState(this.now, options.assistantView ?? "agent");
    this.limits = new RateLimits({
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.postBurst === undefined ? {} : { postBurst: options.postBurst }),
    });
    this.workspace = {
      teamId: options.teamId ?? "T0001",
      enterpriseId: options.enterpriseId,
      botUserId: options.botUserId ?? "UBOT",
      botId: options.botId ?? "BBOT",
      store: this.store,
      users: this.users,
      ephemerals: this.ephemerals,
      views: this.views,
      viewState: this.viewState,
      statuses: this.statuses,
      agent: this.agent,
      now: this.now,
      streamsRefused: new Set(),
      socketUrl: () => this.socketServer?.url(),
    };
    this.seedBotUser();
    server.on("request", (req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { ok: false, error: "fake_slack_error" });
        else res.destroy();
        console.error("fake slack failed to answer a request", error);
      });
    });
  }

  static async start(options: FakeSlackOptions = {}): Promise<FakeSlack> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    let fake: FakeSlack | undefined;
    try {
      const socket = options.socketMode
        ? await startSocketModeServer({ onActivity: () => fake?.notify() })
        : undefined;
      fake = new FakeSlack(server, socket, options);
      return fake;
    } catch (error) {
      server.close();
      throw error;
    }
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The Web API base for `slackApiUrl`: `http://127.0.0.1:<port>/api/`. */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  get teamId(): string {
    return this.workspace.teamId;
  }

  get botUserId(): string {
    return this.workspace.botUserId;
  }

  get botId(): string {
    return this.workspace.botId;
  }

  /** The Socket Mode server; only with `startFakeSlack({ socketMode: true })`. */
  get socket(): SocketModeServer {
    if (this.socketServer === undefined) {
      throw new Error("no socket mode server: start the fake with { socketMode: true }");
    }
    return this.socketServer;
  }

  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** 429s answered by the rate limits (not by failNext), over all methods. */
  get rateLimited(): number {
    let total = 0;
    for (const count of this.limitedBy.values()) total += count;
    return total;
  }

  rateLimitedFor(method: string): number {
    return this.limitedBy.get(method) ?? 0;
  }

  /**
   * Every post, edit and delete of a message (seeded ones and the bot's), stamped by the
   * fake's clock when it happened: what a person would have seen, and when.
   */
  get timeline(): readonly MessageChange[] {
    return this.store.timeline;
  }

  /** Every stored message of the channel (seeded and the bot's) in ts order. */
  messages(channel: string): StoredMessage[] {
    return this.store.inChannel(channel);
  }

  /** The bot's messages in the thread, not the parent, in order. */
  replies(channel: string, threadTs: string): StoredMessage[] {
    return this.store
      .thread(channel, threadTs)
      .filter((m) => m.ts !== threadTs && m.bot_id === this.botId);
  }

  /** The text a person sees in the message (blocks when present, entities decoded). */
  visibleText(message: MessageContent): string {
    return visibleText(message);
  }

  /** The visible text of each of the bot's replies in the thread, in order. */
  threadTranscript(channel: string, threadTs: string): string[] {
    return this.replies(channel, threadTs).map(visibleText);
  }

  /**
   * The thread's status line as Slack shows it now: undefined once cleared (a status "", a
   * reply of the app in the thread) or two minutes after it was set.
   */
  statusLine(channel: string, threadTs: string): StatusLineState | undefined {
    const line = this.agent.statusLines.get(threadKey(channel, threadTs));
    return line && this.now() - line.at < STATUS_TTL_MS ? line : undefined;
  }

  /** The thread's agent session, if one was made. */
  session(channel: string, threadTs: string): SessionState | undefined {
    return this.agent.sessions.get(threadKey(channel, threadTs));
  }

  /**
   * The suggested prompts set for a channel (agent view) or a thread of it (assistant view).
   */
  suggestedPrompts(channel: string, threadTs?: string): PromptsState | undefined {
    return this.agent.prompts.get(threadKey(channel, threadTs));
  }

  /** The title `assistant.threads.setTitle` gave the thread. */
  threadTitle(channel: string, threadTs: string): string | undefined {
    return this.agent.titles.get(threadKey(channel, threadTs));
  }

  /**
   * Slack's stop control on the thread's agent session, pressed by `user`: the
   * `agent_session_stopped` event Slack would send. Slack shows the control only while the
   * session is `processing`, so pressing it otherwise throws.
   */
  pressSessionStop(channel: string, threadTs: string, user: string): Record<string, unknown> {
    const status = this.session(channel, threadTs)?.status;
    if (status !== "processing") {
      throw new Error(
        `no stop control in ${channel} ${threadTs}: the session is ${status ?? "absent"}`,
      );
    }
    return agentSessionStopped({ channel, thread_ts: threadTs, user });
  }

  /**
   * The stream of a message made by `chat.startStream` (what it showed, whether it still
   * streams, as of now), or undefined for any other message.
   */
  streamState(channel: string, ts: string): StreamState | undefined {
    const message = this.store.find(channel, ts);
    return message === undefined ? undefined : streamOf(message, this.now());
  }

  /** The person presses stop on a streaming message; false when it was not streaming. */
  stopStreamAsUser(channel: string, ts: string): boolean {
    const message = this.store.find(channel, ts);
    const stopped = message !== undefined && stopAsUser(message, this.now());
    this.notify();
    return stopped;
  }

  /** From now on `chat.startStream` in this channel answers `channel_type_not_supported`. */
  refuseStreamsIn(channel: string): void {
    this.workspace.streamsRefused.add(channel);
  }

  seedUser(user: SeedUser): void {
    this.users.set(user.id, { ...user });
  }

  seedMessage(message: SeedMessage): StoredMessage {
    return this.store.seed(message);
  }

  /**
   * Makes the next `count` calls of `method` fail, before limits or state are touched (or,
   * with `landed`, after the call has changed the workspace).
   */
  failNext(method: string, options: FailOptions = {}): void {
    this.faults.add(method, options);
  }

  /** A response URL on this fake; JSON POSTs to it are recorded in `responses`. */
  responseUrl(): string {
    const id = randomUUID();
    this.responseIds.add(id);
    return `http://127.0.0.1:${this.port}/response/${id}`;
  }

  /**
   * Resolves once `predicate(this)` holds, re-checking after every recorded call, response
   * and socket ack; rejects after `timeoutMs` (default 5000) naming what it waited for.
   */
  waitFor(predicate: (fake: FakeSlack) => boolean, timeoutMs = 5000): Promise<void> {
    return this.waiters.until(
      () => predicate(this),
      timeoutMs,
      () => this.timeoutMessage(predicate, timeoutMs),
    );
  }

  /** Forgets every call, message, user, fault, limit window and response. */
  reset(): void {
    for (const list of [this.calls, this.responses, this.ephemerals, this.views, this.statuses]) {
      list.length = 0;
    }
    this.store.clear();
    this.agent.clear();
    this.workspace.streamsRefused.clear();
    this.users.clear();
    this.seedBotUser();
    this.limits.reset();
    this.faults.clear();
    this.limitedBy.clear();
    this.responseIds.clear();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.socketServer?.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private seedBotUser(): void {
    this.users.set(this.botUserId, { id: this.botUserId, name: "bot", real_name: "Assistant" });
  }

  private notify(): void {
    this.waiters.notify();
  }

  private timeoutMessage(predicate: (fake: FakeSlack) => boolean, timeoutMs: number): string {
    const source = String(predicate).replace(/\s+/g, " ").slice(0, 200);
    const recent = this.calls
      .slice(-8)
      .map((c) => `${c.method} ${c.status}${c.ok ? " ok" : ` ${c.error ?? "failed"}`}`);
    return (
      `fake slack: waitFor timed out after ${timeoutMs} ms waiting for ${source}; ` +
      `${this.calls.length} calls, last: [${recent.join(", ")}]`
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const raw = await readBody(req);
    if (url.pathname.startsWith("/api/")) {
      this.answerMethod(url.pathname.slice("/api/".length), req, raw, url.searchParams, res);
    } else if (url.pathname.startsWith("/response/") && req.method === "POST") {
      this.answerResponseUrl(url.pathname.slice("/response/".length), raw, res);
    } else {
      send(res, 404, { ok: false, error: "not_found" });
    }
  }

  private answerMethod(
    method: string,
    req: IncomingMessage,
    raw: string,
    query: URLSearchParams,
    res: ServerResponse,
  ): void {
    const at = this.now();
    const decoded = decodeArgs(req, raw, query);
    const token: TokenKind = tokenKind(req, decoded ?? {});
    const args: Args = { ...decoded };
    delete args.token;
    const record = (status: number, body: SlackBody): void => {
      const call: RecordedCall = {
        method,
        args,
        at,
        status,
        ok: body.ok,
        hadToken: token !== "none",
      };
      if (body.error !== undefined) call.error = body.error;
      this.calls.push(call);
    };

    const fault = this.faults.take(method);
    if (fault !== undefined) {
      // The work is done (its own answer dropped) before the fault is answered.
      if (fault.landed && decoded !== undefined) callMethod(this.workspace, method, args, token);
      const body = { ok: false, error: fault.error };
      const headers = fault.status === 429 ? { "retry-after": String(fault.retryAfter) } : {};
      record(fault.status, body);
      send(res, fault.status, body, headers);
      this.notify();
      return;
    }
    if (this.enforceLimits) {
      const channel = typeof args.channel === "string" ? args.channel : undefined;
      const verdict = this.limits.take(method, channel, at);
      if (!verdict.allowed) {
        this.limitedBy.set(method, this.rateLimitedFor(method) + 1);
        const body = { ok: false, error: "ratelimited" };
        record(429, body);
        send(res, 429, body, { "retry-after": String(verdict.retryAfterSec) });
        this.notify();
        return;
      }
    }
    const body =
      decoded === undefined
        ? { ok: false, error: "invalid_json" }
        : callMethod(this.workspace, method, args, token);
    record(200, body);
    send(res, 200, body);
    // After the answer is written, so a resolved waitFor never races the bot's own response.
    this.notify();
  }

  private answerResponseUrl(id: string, raw: string, res: ServerResponse): void {
    if (!this.responseIds.has(id)) {
      send(res, 404, { ok: false, error: "expired_url" });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      send(res, 400, { ok: false, error: "invalid_payload" });
      return;
    }
    this.responses.push({ id, body, at: this.now() });
    send(res, 200, { ok: true });
    this.notify();
  }
}

export function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  return FakeSlack.start(options);
}
