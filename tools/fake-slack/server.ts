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
import { appUninstalled, tokensRevoked } from "../install-events.js";
import { eventEnvelope, type Payload } from "../slack-events.js";
import type {
  AssistantView,
  PromptsState,
  SessionState,
  StatusLineState,
} from "./agent-methods.js";
import type { MessageContent } from "./blocks.js";
import { type FailOptions, FaultQueue } from "./faults.js";
import { FakeFiles, type FileDownload, type NewFile, type SlackFile } from "./files.js";
import { type FakeOAuthApp, Installs, type NewInstall } from "./installs.js";
import type { MethodLimits } from "./limits.js";
import type { MessageChange, SeedMessage, StoredMessage, StreamState } from "./messages.js";
import {
  type Args,
  callMethod,
  type EphemeralMessage,
  type OpenedView,
  type SeedUser,
  type SlackBody,
  type ThreadStatus,
} from "./methods.js";
import { type SocketModeServer, startSocketModeServer } from "./socket-mode-server.js";
import type { ViewState } from "./views.js";
import { Waiters } from "./waiters.js";
import {
  basicCredentials,
  decodeArgs,
  readBody,
  sendJson as send,
  tokenKind,
  tokenOf,
} from "./wire.js";
import { FakeWorkspace, type WorkspaceIdentity } from "./workspace.js";

export type {
  AssistantView,
  EphemeralMessage,
  FailOptions,
  FakeOAuthApp,
  FakeWorkspace,
  FileDownload,
  MessageChange,
  NewFile,
  NewInstall,
  OpenedView,
  PromptsState,
  SeedMessage,
  SeedUser,
  SessionState,
  SlackFile,
  StatusLineState,
  StoredMessage,
  ThreadStatus,
};

export interface FakeSlackOptions {
  /** The first workspace's id. Default "T0001". */
  teamId?: string;
  /** The first workspace's Enterprise org (`auth.test` enterprise_id); default none. */
  enterpriseId?: string;
  /** The bot's user id in the first workspace (`auth.test` user_id). Default "UBOT". */
  botUserId?: string;
  /** The bot's bot id in the first workspace, stamped on its messages. Default "BBOT". */
  botId?: string;
  /**
   * The first workspace's bot token. Default none: the first workspace serves every token
   * that no install issued (so a test need not know the bot's). When set, any other unknown
   * token is answered `invalid_auth`.
   */
  botToken?: string;
  /** The app's OAuth credentials, which `oauth.v2.access` checks; default none (it refuses). */
  oauth?: FakeOAuthApp;
  /** Per-method overrides of the rate tiers, in calls per minute (each workspace's own). */
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
  /**
   * The workspace whose bot token the call carried (the one that served it, or that a
   * revoked token was issued for), if any.
   */
  team?: string;
}

export interface RecordedResponse {
  id: string;
  body: unknown;
  at: number;
}

export class FakeSlack {
  readonly calls: RecordedCall[] = [];
  readonly responses: RecordedResponse[] = [];
  private readonly faults = new FaultQueue();
  private readonly files = new FakeFiles();
  private readonly responseIds = new Set<string>();
  private readonly waiters = new Waiters();
  /** Every workspace by team id (an org-wide install: by org id), the first one first. */
  private readonly workspaces = new Map<string, FakeWorkspace>();
  private readonly first: FakeWorkspace;
  private readonly installs: Installs;
  private readonly now: () => number;
  private readonly enforceLimits: boolean;
  private closed = false;

  private constructor(
    private readonly server: Server,
    private readonly socketServer: SocketModeServer | undefined,
    private readonly options: FakeSlackOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.enforceLimits = options.enforceLimits ?? true;
    this.first = this.addWorkspace({
      teamId: options.teamId ?? "T0001",
      ...(options.enterpriseId === undefined ? {} : { enterpriseId: options.enterpriseId }),
      ...(options.botUserId === undefined ? {} : { botUserId: options.botUserId }),
      ...(options.botId === undefined ? {} : { botId: options.botId }),
    });
    this.installs = new Installs(this.first.teamId, options.botToken, options.oauth);
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

  /**
   * A file a person shared in workspace `team` (default the first), served at its
   * `url_private` by this fake as Slack's file host: put the object it returns in an event's
   * or a seeded message's `files`.
   */
  addFile(file: NewFile, team: string = this.first.teamId): SlackFile {
    return this.files.add(team, this.fileBase, file);
  }

  /** Every download of a shared file asked of the fake, in order (never the token). */
  get fileDownloads(): FileDownload[] {
    return this.files.downloads;
  }

  private get fileBase(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /** The Web API base for `slackApiUrl`: `http://127.0.0.1:<port>/api/`. */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  get teamId(): string {
    return this.first.teamId;
  }

  get botUserId(): string {
    return this.first.botUserId;
  }

  get botId(): string {
    return this.first.botId;
  }

  /** The first workspace's ephemeral messages, in order. */
  get ephemerals(): EphemeralMessage[] {
    return this.first.ephemerals;
  }

  /** The first workspace's opened views, in order. */
  get views(): OpenedView[] {
    return this.first.views;
  }

  /** Triggers used, and every Home tab published (`views.publish`), in the first workspace. */
  get viewState(): ViewState {
    return this.first.viewState;
  }

  /** The first workspace's `assistant.threads.setStatus` calls, in order. */
  get statuses(): ThreadStatus[] {
    return this.first.statuses;
  }

  /** The Socket Mode server; only with `startFakeSlack({ socketMode: true })`. */
  get socket(): SocketModeServer {
    if (this.socketServer === undefined) {
      throw new Error("no socket mode server: start the fake with { socketMode: true }");
    }
    return this.socketServer;
  }

  /**
   * A workspace by its team id (an org-wide install by its org id): the first one, or one
   * an install code made.
   */
  workspace(teamId: string): FakeWorkspace {
    const found = this.workspaces.get(teamId);
    if (found === undefined) throw new Error(`fake slack: no workspace ${teamId}`);
    return found;
  }

  /**
   * A code for installing the app in a workspace, as Slack hands it to the redirect once a
   * person approved: `oauth.v2.access` exchanges it once for a new bot token. The workspace
   * is made now when it is new (its people and messages may be seeded before the install),
   * keyed by its team id, or by its org's id for an org-wide install.
   */
  installCode(install: NewInstall): string {
    const key = install.orgWide ? install.enterpriseId : install.teamId;
    if (key === undefined) throw new Error("fake slack: an org-wide install names its org");
    if (!this.workspaces.has(key)) {
      const { installerId: _i, redirectUri: _r, scopes: _s, ...identity } = install;
      this.addWorkspace({ ...identity, teamId: key });
    }
    return this.installs.issueCode(key, install);
  }

  /**
   * The live bot token an install issued the workspace (the first one's: `botToken`, if
   * set), so a test can look for it where it must not be (a log, a database file).
   */
  botTokenOf(teamId: string): string | undefined {
    return this.installs.tokenOf(teamId);
  }

  /**
   * Every bot token an install issued the workspace, revoked ones too (`auth.revoke`, a
   * reinstall), so a test can look for a token the bot gave back where it must not be.
   */
  tokensIssuedTo(teamId: string): string[] {
    return this.installs.issuedTo(teamId);
  }

  /**
   * The app is removed from the workspace: its tokens stop working (`token_revoked`). Returns
   * the `app_uninstalled` envelope Slack sends; deliver it to the bot (signed, or over the socket).
   */
  uninstall(teamId: string): Payload {
    const ws = this.workspace(teamId);
    this.installs.revoke(teamId);
    return this.envelope(ws, appUninstalled());
  }

  /**
   * The workspace's bot token is revoked (the app stays listed): the `tokens_revoked`
   * envelope Slack sends, naming the bot user.
   */
  revokeTokens(teamId: string): Payload {
    const ws = this.workspace(teamId);
    this.installs.revoke(teamId);
    return this.envelope(ws, tokensRevoked({ bot: [ws.botUserId] }));
  }

  /**
   * An event as Slack wraps it for the installation in this workspace. For an org-wide
   * installation `inTeam` names the org's workspace the event happened in, which Slack gives
   * as the envelope's `team_id` (the authorization names only the org); without it, the org.
   */
  envelope(ws: FakeWorkspace, event: Payload, inTeam?: string): Payload {
    return eventEnvelope(event, {
      teamId: ws.orgWide ? (inTeam ?? ws.enterpriseId ?? ws.teamId) : ws.teamId,
      botUserId: ws.botUserId,
      ...(ws.enterpriseId === undefined ? {} : { enterpriseId: ws.enterpriseId }),
      enterpriseInstall: ws.orgWide,
    });
  }

  /** Every call, of every workspace, to `method`. */
  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** 429s answered by the rate limits (not by failNext), over all methods and workspaces. */
  get rateLimited(): number {
    let total = 0;
    for (const ws of this.workspaces.values()) total += ws.rateLimited;
    return total;
  }

  rateLimitedFor(method: string): number {
    let total = 0;
    for (const ws of this.workspaces.values()) total += ws.rateLimitedFor(method);
    return total;
  }

  /**
   * Every post, edit and delete of a message in the first workspace (seeded ones and the
   * bot's), stamped by the fake's clock when it happened: what a person would have seen.
   */
  get timeline(): readonly MessageChange[] {
    return this.first.store.timeline;
  }

  /** Every stored message of the channel (seeded and the bot's) in ts order. */
  messages(channel: string): StoredMessage[] {
    return this.first.messages(channel);
  }

  /** The bot's messages in the thread, not the parent, in order. */
  replies(channel: string, threadTs: string): StoredMessage[] {
    return this.first.replies(channel, threadTs);
  }

  /** The text a person sees in the message (blocks when present, entities decoded). */
  visibleText(message: MessageContent): string {
    return this.first.visibleText(message);
  }

  /** The visible text of each of the bot's replies in the thread, in order. */
  threadTranscript(channel: string, threadTs: string): string[] {
    return this.first.threadTranscript(channel, threadTs);
  }

  /**
   * The thread's status line as Slack shows it now: undefined once cleared (a status "", a
   * reply of the app in the thread) or two minutes after it was set.
   */
  statusLine(channel: string, threadTs: string): StatusLineState | undefined {
    return this.first.statusLine(channel, threadTs);
  }

  /** The thread's agent session, if one was made. */
  session(channel: string, threadTs: string): SessionState | undefined {
    return this.first.session(channel, threadTs);
  }

  /**
   * The suggested prompts set for a channel (agent view) or a thread of it (assistant view).
   */
  suggestedPrompts(channel: string, threadTs?: string): PromptsState | undefined {
    return this.first.suggestedPrompts(channel, threadTs);
  }

  /** The title `assistant.threads.setTitle` gave the thread. */
  threadTitle(channel: string, threadTs: string): string | undefined {
    return this.first.threadTitle(channel, threadTs);
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
    return this.first.streamState(channel, ts);
  }

  /** The person presses stop on a streaming message; false when it was not streaming. */
  stopStreamAsUser(channel: string, ts: string): boolean {
    return this.first.stopStreamAsUser(channel, ts);
  }

  /** From now on `chat.startStream` in this channel answers `channel_type_not_supported`. */
  refuseStreamsIn(channel: string): void {
    this.first.refuseStreamsIn(channel);
  }

  seedUser(user: SeedUser): void {
    this.first.seedUser(user);
  }

  seedMessage(message: SeedMessage): StoredMessage {
    return this.first.seedMessage(message);
  }

  /**
   * A ts for a person's new message in the installation's workspace, from the same counter as
   * the bot's posts (a ts from the clock alone may be one a post of the same millisecond took).
   */
  nextTs(): string {
    return this.first.nextTs();
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
   * and socket ack; rejects after `timeoutMs` (default 15 s: a wait ends as soon as its
   * condition holds, so the default only bounds a failure, and a loaded two-core machine
   * running several bots at once can take seconds) naming what it waited for.
   */
  waitFor(predicate: (fake: FakeSlack) => boolean, timeoutMs = 15_000): Promise<void> {
    return this.waiters.until(
      () => predicate(this),
      timeoutMs,
      () => this.timeoutMessage(predicate, timeoutMs),
    );
  }

  /**
   * Forgets every call, message, user, fault, limit window and response, every workspace but
   * the first, and every install.
   */
  reset(): void {
    this.calls.length = 0;
    this.responses.length = 0;
    for (const ws of this.workspaces.values())
      if (ws !== this.first) this.workspaces.delete(ws.teamId);
    this.first.clear();
    this.installs.clear();
    this.faults.clear();
    this.responseIds.clear();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.socketServer?.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private addWorkspace(identity: WorkspaceIdentity): FakeWorkspace {
    const { limits, postBurst } = this.options;
    const ws = new FakeWorkspace(identity, {
      now: this.now,
      assistantView: this.options.assistantView ?? "agent",
      ...(limits === undefined ? {} : { limits }),
      ...(postBurst === undefined ? {} : { postBurst }),
      socketUrl: () => this.socketServer?.url(),
      fileInfo: (team, id) => this.files.info(team, this.fileBase, id),
      onChange: () => this.notify(),
    });
    this.workspaces.set(ws.teamId, ws);
    return ws;
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
    } else if (url.pathname.startsWith("/files-pri/") && req.method === "GET") {
      this.files.serve(url.pathname, req, res, (token) => {
        const served = this.servingWorkspace(token);
        return served instanceof FakeWorkspace ? served.teamId : undefined;
      });
      this.notify();
    } else if (url.pathname.startsWith("/response/") && req.method === "POST") {
      this.answerResponseUrl(url.pathname.slice("/response/".length), raw, res);
    } else {
      send(res, 404, { ok: false, error: "not_found" });
    }
  }

  /**
   * Which workspace serves the call: the one its bot token names (the app-level token's
   * `apps.connections.open` belongs to the first), or the error Slack answers for the token.
   */
  private servingWorkspace(
    token: string | undefined,
  ): FakeWorkspace | { error: string; team?: string | undefined } {
    if (token === undefined || tokenKind(token) === "app") return this.first;
    const route = this.installs.route(token);
    return "error" in route ? route : this.workspace(route.team);
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
    const token = tokenOf(req, decoded ?? {});
    const args: Args = { ...decoded };
    delete args.token;
    const oauth = method === "oauth.v2.access";
    // The exchange needs no token: the app's credentials stand for it.
    const served = oauth ? undefined : this.servingWorkspace(token);
    const ws = served instanceof FakeWorkspace ? served : undefined;
    const reply = (status: number, body: SlackBody, headers: Record<string, string> = {}) => {
      const call: RecordedCall = {
        method,
        args: oauth ? withoutSecret(args) : args,
        at,
        status,
        ok: body.ok,
        hadToken: token !== undefined,
      };
      if (body.error !== undefined) call.error = body.error;
      const named = ws?.teamId ?? (served && "error" in served ? served.team : undefined);
      if (named !== undefined && token !== undefined) call.team = named;
      this.calls.push(call);
      send(res, status, body, headers);
      // After the answer is written, so a resolved waitFor never races the bot's own response.
      this.notify();
    };

    const fault = this.faults.take(method);
    if (fault !== undefined) {
      // The work is done (its own answer dropped) before the fault is answered.
      if (fault.landed && decoded !== undefined && ws !== undefined) {
        callMethod(ws, method, args, tokenKind(token));
      }
      const headers = fault.status === 429 ? { "retry-after": String(fault.retryAfter) } : {};
      reply(fault.status, { ok: false, error: fault.error }, headers);
      return;
    }
    if (oauth) {
      const body =
        decoded === undefined
          ? { ok: false, error: "invalid_json" }
          : this.installs.exchange(args, basicCredentials(req), (team) => this.workspace(team));
      reply(200, body);
      return;
    }
    if (token !== undefined && ws === undefined && served !== undefined && "error" in served) {
      reply(200, { ok: false, error: served.error });
      return;
    }
    if (method === "auth.revoke" && token !== undefined && ws !== undefined) {
      // The token the call carries stops working, as Slack's auth.revoke does.
      this.installs.revokeToken(token);
      reply(200, { ok: true, revoked: true });
      return;
    }
    const home = ws ?? this.first;
    if (this.enforceLimits) {
      const channel = typeof args.channel === "string" ? args.channel : undefined;
      const verdict = home.limits.take(method, channel, at);
      if (!verdict.allowed) {
        home.limitedBy.set(method, home.rateLimitedFor(method) + 1);
        reply(
          429,
          { ok: false, error: "ratelimited" },
          { "retry-after": String(verdict.retryAfterSec) },
        );
        return;
      }
    }
    const body =
      decoded === undefined
        ? { ok: false, error: "invalid_json" }
        : callMethod(home, method, args, tokenKind(token));
    reply(200, body);
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

/** The exchange's arguments as recorded: the client secret is never kept. */
function withoutSecret(args: Args): Args {
  const { client_secret: _secret, ...rest } = args;
  return rest;
}

export function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  return FakeSlack.start(options);
}
