/**
 * One workspace of the fake Slack (or one Enterprise org, for an org-wide install): who the
 * bot is there, its messages, people, views, agent surface and its own rate budgets. Slack
 * counts its limits per app per workspace, so two workspaces never share a window. The
 * accessors read the workspace back as a person in it would see it.
 */
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
import { type MethodLimits, RateLimits } from "./limits.js";
import {
  MessageStore,
  type SeedMessage,
  type StoredMessage,
  type StreamState,
} from "./messages.js";
import type { EphemeralMessage, OpenedView, SeedUser, ThreadStatus, Workspace } from "./methods.js";
import { stopAsUser, streamOf } from "./streams.js";
import type { ViewState } from "./views.js";

export interface WorkspaceIdentity {
  teamId: string;
  /** Default "Fake Workspace". */
  teamName?: string;
  /** Its Enterprise org, when it is in one. */
  enterpriseId?: string;
  /** Default "Fake Org". */
  enterpriseName?: string;
  /** An org-wide install: the app is installed on the whole org (then teamId is the org's). */
  orgWide?: boolean;
  /** Default "UBOT". */
  botUserId?: string;
  /** Default "BBOT". */
  botId?: string;
}

export interface WorkspaceSettings {
  now: () => number;
  assistantView: AssistantView;
  limits?: MethodLimits;
  postBurst?: number;
  socketUrl: () => string | undefined;
  /** A shared file's object for workspace `team` (files.ts). */
  fileInfo: (team: string, id: string) => Record<string, unknown> | undefined;
  /** Told of every change a test makes directly (a stream stopped by a person). */
  onChange: () => void;
}

export class FakeWorkspace implements Workspace {
  readonly teamId: string;
  readonly teamName: string;
  readonly enterpriseId: string | undefined;
  readonly enterpriseName: string;
  readonly orgWide: boolean;
  readonly botUserId: string;
  readonly botId: string;
  readonly store: MessageStore;
  readonly users = new Map<string, SeedUser>();
  readonly ephemerals: EphemeralMessage[] = [];
  readonly views: OpenedView[] = [];
  /** Triggers used, and every Home tab published (`views.publish`), in order. */
  readonly viewState: ViewState = { usedTriggers: new Set(), published: [] };
  /** `assistant.threads.setStatus` calls, in order. */
  readonly statuses: ThreadStatus[] = [];
  readonly agent: AgentState;
  readonly now: () => number;
  readonly streamsRefused = new Set<string>();
  /** This workspace's rate windows: Slack's limits are per app per workspace. */
  readonly limits: RateLimits;
  /** 429s the rate limits answered here, by method. */
  readonly limitedBy = new Map<string, number>();

  constructor(
    identity: WorkspaceIdentity,
    private readonly settings: WorkspaceSettings,
  ) {
    this.teamId = identity.teamId;
    this.teamName = identity.teamName ?? "Fake Workspace";
    this.enterpriseId = identity.enterpriseId;
    this.enterpriseName = identity.enterpriseName ?? "Fake Org";
    this.orgWide = identity.orgWide ?? false;
    this.botUserId = identity.botUserId ?? "UBOT";
    this.botId = identity.botId ?? "BBOT";
    this.now = settings.now;
    this.store = new MessageStore(this.now);
    this.agent = new AgentState(this.now, settings.assistantView);
    this.limits = new RateLimits({
      ...(settings.limits === undefined ? {} : { limits: settings.limits }),
      ...(settings.postBurst === undefined ? {} : { postBurst: settings.postBurst }),
    });
    this.seedBotUser();
  }

  socketUrl(): string | undefined {
    return this.settings.socketUrl();
  }

  fileInfo(id: string): Record<string, unknown> | undefined {
    return this.settings.fileInfo(this.teamId, id);
  }

  /** 429s answered by this workspace's rate limits, over all methods. */
  get rateLimited(): number {
    let total = 0;
    for (const count of this.limitedBy.values()) total += count;
    return total;
  }

  rateLimitedFor(method: string): number {
    return this.limitedBy.get(method) ?? 0;
  }

  /** Calls of `method` this workspace's budget counts in the last minute. */
  spent(method: string): number {
    return this.limits.spent(method, this.now());
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

  /** The suggested prompts set for a channel (agent view) or a thread of it (assistant view). */
  suggestedPrompts(channel: string, threadTs?: string): PromptsState | undefined {
    return this.agent.prompts.get(threadKey(channel, threadTs));
  }

  /** The title `assistant.threads.setTitle` gave the thread. */
  threadTitle(channel: string, threadTs: string): string | undefined {
    return this.agent.titles.get(threadKey(channel, threadTs));
  }

  /** The stream of a message made by `chat.startStream`, or undefined for any other message. */
  streamState(channel: string, ts: string): StreamState | undefined {
    const message = this.store.find(channel, ts);
    return message === undefined ? undefined : streamOf(message, this.now());
  }

  /** The person presses stop on a streaming message; false when it was not streaming. */
  stopStreamAsUser(channel: string, ts: string): boolean {
    const message = this.store.find(channel, ts);
    const stopped = message !== undefined && stopAsUser(message, this.now());
    this.settings.onChange();
    return stopped;
  }

  /** From now on `chat.startStream` in this channel answers `channel_type_not_supported`. */
  refuseStreamsIn(channel: string): void {
    this.streamsRefused.add(channel);
  }

  seedUser(user: SeedUser): void {
    this.users.set(user.id, { ...user });
  }

  seedMessage(message: SeedMessage): StoredMessage {
    return this.store.seed(message);
  }

  /** A ts no message here has, as Slack gives a person's new message. */
  nextTs(): string {
    return this.store.nextTs();
  }

  /** What `auth.test` answers for this workspace's bot token. */
  authTest(): Record<string, unknown> & { ok: true } {
    return {
      ok: true,
      url: this.url,
      team: this.orgWide ? this.enterpriseName : this.teamName,
      user: this.users.get(this.botUserId)?.name ?? "bot",
      // For an org-wide token Slack names the org here (unconfirmed); the fake keys it so.
      team_id: this.teamId,
      user_id: this.botUserId,
      bot_id: this.botId,
      ...(this.enterpriseId === undefined ? {} : { enterprise_id: this.enterpriseId }),
      is_enterprise_install: this.orgWide,
    };
  }

  /** The workspace's address; the first workspace keeps the one it always had. */
  get url(): string {
    return this.teamId === "T0001" ? "https://fake.slack/" : `https://${this.teamId}.fake.slack/`;
  }

  /**
   * Forgets every message, person, view opened, status, stream refusal and rate window (the
   * triggers used and Home tabs published stay, as they always have).
   */
  clear(): void {
    for (const list of [this.ephemerals, this.views, this.statuses]) list.length = 0;
    this.store.clear();
    this.agent.clear();
    this.streamsRefused.clear();
    this.users.clear();
    this.seedBotUser();
    this.limits.reset();
    this.limitedBy.clear();
  }

  private seedBotUser(): void {
    this.users.set(this.botUserId, { id: this.botUserId, name: "bot", real_name: "Assistant" });
  }
}
