import type { RunSettings } from "../service/schemas.js";
import type { NewTurn, Turn, TurnEvent, TurnOutcome } from "./turn.js";

export type { RunSettings };

/**
 * What the bot keeps, as interfaces. SQLite (`store/sqlite/`) is the default, PostgreSQL
 * (`store/postgres/`) the one replicas share; `store/in-memory.ts` is SQLite in memory, for
 * fast tests of the core. Each passes the same suite (test/store/stores.test.ts).
 *
 * Every call returns a promise: a store on a network (PostgreSQL) must never hold the event
 * loop while it waits. What a caller read is only as true as the store's next answer: a
 * decision taken from a read and acted on after an await is either re-checked by the write
 * that acts on it (a transition written only from the state it was computed from, a claim
 * that is one conditional upsert, an insert under a unique key) or cannot be invalidated
 * (docs/architecture.md, "What holds across an await").
 */

/** One Slack thread mapped to one service thread. */
export interface Conversation {
  id: number;
  team: string;
  channel: string;
  threadTs: string;
  assistantId: string;
  serviceThreadId: string | null;
  /**
   * Who opened the service thread: a person's Slack id (their own token) or "shared". The
   * service keeps a thread for the token that created it, so only that identity can continue
   * it. Null: no service thread yet, or one opened before the owner was recorded.
   */
  serviceThreadOwner: string | null;
  /** The latest Slack ts of the thread passed on to the service; null: nothing yet. */
  passedThroughTs: string | null;
}

export interface ConversationKey {
  team: string;
  channel: string;
  threadTs: string;
}

/**
 * The assistant a new conversation talks to, when it may be a choice (AssistantChoiceStore):
 * the one chosen for `place` in the conversation's workspace if it is still `listed`, else
 * `otherwise`. The conversation's record reads the choice in its own statement, so the way to
 * Slack's acknowledgement has no round trip for it.
 */
export interface AssistantPick {
  place: { scope: "channel" | "person"; key: string };
  listed: readonly string[];
  otherwise: string;
}

export interface ConversationStore {
  find(key: ConversationKey): Promise<Conversation | undefined>;
  byId(id: number): Promise<Conversation | undefined>;
  /** The conversation of this thread, created with this assistant (an id or a pick) if new. */
  ensure(key: ConversationKey, assistant: string | AssistantPick): Promise<Conversation>;
  /** The conversation whose service thread this is (the App Home links a thread to Slack). */
  byServiceThread(serviceThreadId: string): Promise<Conversation | undefined>;
  /**
   * Sets the service thread, and who opened it (null: not known), once; a second call leaves
   * the first in place. The conversation as it then is; undefined if there is none.
   */
  setServiceThread(
    id: number,
    serviceThreadId: string,
    owner: string | null,
  ): Promise<Conversation | undefined>;
  /** The thread was passed on up to `ts` (the caller only moves it forward). */
  setPassedThrough(id: number, ts: string): Promise<void>;
}

export interface SettingsKey {
  team: string;
  channel: string;
  user: string;
}

/** A change of settings: a field set to `null` goes back to the default; absent fields stay. */
export type SettingsChange = { [K in keyof RunSettings]?: RunSettings[K] | null };

/** A person's run settings per channel (a DM is a channel). Absent fields are unset. */
export interface SettingsStore {
  get(key: SettingsKey): Promise<RunSettings>;
  update(key: SettingsKey, change: SettingsChange): Promise<RunSettings>;
  /** A person's settings in every channel where they set one (the App Home), by channel. */
  allFor(team: string, user: string): Promise<{ channel: string; settings: RunSettings }[]>;
}

/** A question to record (TurnStore.record): a turn whose conversation may not exist yet. */
export interface NewQuestion extends Omit<NewTurn, "conversationId"> {
  /** The thread's conversation, when it was found; otherwise it is made (or found) here. */
  conversation?: Conversation;
  /** The assistant a conversation made here answers with: an id, or a pick read in the write. */
  assistant: string | AssistantPick;
  /**
   * How many unfinished turns an asker may have; undefined: no limit. One who has as many
   * already is refused: the turn is recorded finished (outcome `error`), without its text or
   * files, so that it is never answered and a Slack retry of it is still recognised.
   */
  limit?: number;
  /**
   * The conversation's lease, taken for `holder` in the record's own write (on PostgreSQL the
   * same statement) when the turn recorded is the conversation's only unfinished one and
   * nobody has a lease on it: its holder runs it without a claim of its own, a round trip
   * fewer before the answer starts (ConversationLeases.adopt). Undefined: no lease is taken.
   */
  lease?: { holder: string; ttlMs: number };
}

export interface RecordedQuestion {
  conversation: Conversation;
  /** Undefined when this Slack message has a turn already (a retry, another replica's). */
  turn: Turn | undefined;
  /** The asker was past the limit: the turn was recorded refused. */
  overLimit: boolean;
  /** The record took the conversation's lease for the holder it was given (NewQuestion.lease). */
  leased: boolean;
  /**
   * With a lease taken: the asker's settings in the question's channel, read by the record
   * (on PostgreSQL in its statement), for the run's start that follows at once. Undefined
   * without a lease.
   */
  settings?: RunSettings;
}

/**
 * The turns, with one method per transition of the turn's state machine (`store/turn.ts`).
 * Each returns the turn as recorded, and throws IllegalTransition when the turn's state
 * does not allow it.
 */
export interface TurnStore {
  /**
   * Records a Slack message's question as a new turn, in its thread's conversation: the one
   * given, found already, or else made by the same write. Slack's acknowledgement waits for
   * this: PostgreSQL records both in one statement, a single round trip, with the lease when
   * one is asked for and free (NewQuestion.lease).
   */
  record(question: NewQuestion): Promise<RecordedQuestion>;
  byId(id: string): Promise<Turn | undefined>;
  byMessage(team: string, channel: string, messageTs: string): Promise<Turn | undefined>;
  /** Every unfinished turn, in arrival order. */
  unfinished(): Promise<Turn[]>;
  /** The unfinished turns of one conversation, in arrival order (its lease holder runs them). */
  unfinishedIn(conversationId: number): Promise<Turn[]>;
  /**
   * The unfinished turns of these conversations, one read for many: by conversation (its id,
   * ascending), each conversation's in arrival order.
   */
  unfinishedInAny(conversationIds: readonly number[]): Promise<Turn[]>;
  /** A person's unfinished turns in one channel, oldest first. */
  activeFor(team: string, channel: string, user: string): Promise<Turn[]>;
  /** How many turns of this person are unfinished, in every channel of the workspace. */
  unfinishedCountBy(team: string, user: string): Promise<number>;
  /**
   * The conversations in which this person asked (has a turn) in the workspace, by id: the
   * App Home of a person without a token of their own lists only their service threads.
   */
  conversationsAskedIn(team: string, user: string): Promise<number[]>;
  /** The service messages the turns of a conversation have posted (and recorded). */
  serviceMessageIds(conversationId: number): Promise<Set<string>>;
  /**
   * Forgets the texts of turns that finished before `finishedBefore` (epoch ms): the
   * question, the text composed for the service, the notes and the run's error. The rest
   * stays (ids, Slack ts, state, outcome): the row is what recognises a Slack retry of the
   * message as a duplicate, and tells the thread context which thread messages were
   * questions of their own. Purges at most `limit` turns, oldest first, and returns how
   * many; a result of `limit` means there may be more.
   */
  purgeTexts(finishedBefore: number, limit: number): Promise<number>;
  /**
   * Asks whoever runs the unfinished turn to stop it (`Turn.stopRequestedBy`; the first
   * request stands); false when the turn is finished or unknown.
   */
  requestStop(id: string, user: string): Promise<boolean>;

  /**
   * The text the turn posts, fixed; with `attempt`, its post's attempt recorded in the same
   * write (`posting`), for a post that follows at once.
   */
  recordContent(
    id: string,
    content: Omit<Extract<TurnEvent, { type: "compose" }>, "type">,
    options?: { attempt?: boolean },
  ): Promise<Turn>;
  recordPostAttempt(id: string): Promise<Turn>;
  recordMessage(id: string, serviceMessageId: string): Promise<Turn>;
  /**
   * A run start is about to be sent with these settings; its outcome is unknown until recorded.
   * With `message`, the question's message (recordMessage) is recorded in the same write.
   */
  recordRunAttempt(
    id: string,
    settings: RunSettings,
    options?: { message?: string | undefined },
  ): Promise<Turn>;
  /** The start sent certainly started nothing (a 429, no connection): it may be sent again. */
  recordRunNotStarted(id: string): Promise<Turn>;
  recordRunStart(
    id: string,
    run: Omit<Extract<TurnEvent, { type: "run_start" }>, "type">,
  ): Promise<Turn>;
  /** The reply message at index `part` (0: the placeholder) is about to be posted. */
  recordReplyAttempt(id: string, part: number): Promise<Turn>;
  recordReply(id: string, parts: string[]): Promise<Turn>;
  finish(
    id: string,
    end: { outcome: TurnOutcome; modelUsed?: string | null; error?: string | null },
  ): Promise<Turn>;
}

/** What a person thought of a finished answer: which of its feedback buttons they pressed. */
export type FeedbackValue = "positive" | "negative";

export interface Feedback {
  turnId: string;
  /** The Slack user who pressed. */
  user: string;
  value: FeedbackValue;
  /** When they pressed (their latest press), epoch ms on the store's clock. */
  at: number;
}

/**
 * Feedback on answers, one row per person per turn: a person who presses again (changing
 * their mind, or pressing the same button twice) keeps only their latest press.
 */
export interface FeedbackStore {
  /** Records a press now (the store's clock), replacing this person's earlier one on the turn. */
  record(turnId: string, user: string, value: FeedbackValue): Promise<Feedback>;
  /** Everyone's latest press on a turn, earliest first. */
  forTurn(turnId: string): Promise<Feedback[]>;
  /**
   * Forgets presses made before `before` (epoch ms; RETENTION_DAYS, store/retention.ts), at
   * most `limit`, oldest first; returns how many. A result of `limit` means there may be more.
   */
  purge(before: number, limit: number): Promise<number>;
}

/**
 * A person's own access token for the service, sealed (people/token-cipher.ts: AES-256-GCM,
 * bound to the workspace and person): the store never holds it in clear.
 */
export interface SealedToken {
  team: string;
  user: string;
  /** Nonce, tag and ciphertext, as token-cipher.ts writes them. */
  sealed: Buffer;
  /** When it was linked, epoch ms on the store's clock. */
  linkedAt: number;
}

/** The linked tokens: at most one per person of a workspace. */
export interface LinkedTokenStore {
  get(team: string, user: string): Promise<SealedToken | undefined>;
  /** Links (or replaces) the person's token, now. */
  put(team: string, user: string, sealed: Buffer): Promise<SealedToken>;
  /** Forgets it; whether there was one. */
  remove(team: string, user: string): Promise<boolean>;
  /** Every linked token, oldest link first (key rotation). */
  all(): Promise<SealedToken[]>;
  /** Replaces the sealed bytes of these rows, all or none (key rotation); linkedAt stays. */
  reseal(rows: readonly { team: string; user: string; sealed: Buffer }[]): Promise<void>;
}

/**
 * Which assistant new conversations talk to: per channel (set by workspace admins), and per
 * person for their DMs with the bot and the agent view. Unset: ASSISTANT_ID.
 */
export interface AssistantChoiceStore {
  forChannel(team: string, channel: string): Promise<string | undefined>;
  /** `null` goes back to the default. */
  setForChannel(team: string, channel: string, assistantId: string | null): Promise<void>;
  forPerson(team: string, user: string): Promise<string | undefined>;
  setForPerson(team: string, user: string, assistantId: string | null): Promise<void>;
}

/** What `LeaseStore.claim` found: the lease was free or already the holder's, or it had expired in another's hands. */
export type Claim = "claimed" | "taken_over" | "refused";

/** A claim, with what its holder reads first (LeaseStore.claimReading). */
export interface ClaimRead {
  claim: Claim;
  conversation: Conversation | undefined;
  unfinished: Turn[];
}

/**
 * Which copy of the bot (a replica, named by `holder`) runs each conversation's turns: one at
 * a time, in order, across replicas sharing one database. A lease lasts until its expiry
 * (epoch ms on the store's clock); the holder renews it while it works and releases it when
 * the conversation has nothing left to run, or when it stops. A replica that dies stops
 * renewing, and another takes the conversation over once the lease has expired.
 */
export interface LeaseStore {
  /**
   * Takes the conversation's lease for `holder` until now + `ttlMs`, when it is free, expired,
   * or already `holder`'s (then it is renewed). "refused": another holder's lease is live.
   */
  claim(conversationId: number, holder: string, ttlMs: number): Promise<Claim>;
  /**
   * `claim`, and for a claim that holds, what its holder reads first: the conversation and
   * its unfinished turns, in the order they arrived (none when refused). On PostgreSQL one
   * statement, whose reads see what was recorded before it began: a turn recorded while it
   * runs is found by the holder's next look, as one recorded just after a claim is.
   */
  claimReading(conversationId: number, holder: string, ttlMs: number): Promise<ClaimRead>;
  /**
   * Extends every lease `holder` still holds to now + `ttlMs` (one that expired but that
   * nobody took is still its own); the conversations it holds, by id.
   */
  renew(holder: string, ttlMs: number): Promise<number[]>;
  /**
   * Gives `holder`'s lease back unless the conversation has an unfinished turn: those turns,
   * in the order they arrived, and the lease kept; none when it was given back (or was not
   * `holder`'s). The check and the release are one statement: a turn recorded before it keeps
   * the lease, and the claim of one recorded after it finds the lease free (on PostgreSQL, a
   * claim that meets the row being deleted waits for the delete, then takes the lease).
   */
  releaseIfDone(conversationId: number, holder: string): Promise<Turn[]>;
  /** Gives every lease of `holder` back (a replica stopping); how many it held. */
  releaseAll(holder: string): Promise<number>;
  /**
   * The conversations with an unfinished turn and no live lease (none, or expired), the one
   * with the oldest unfinished turn first, at most `limit`: work nobody is doing.
   */
  unattended(limit: number): Promise<number[]>;
  /** How many live leases `holder` has (metrics). */
  heldBy(holder: string): Promise<number>;
}

/**
 * Which installation: a workspace (its team id, and its Enterprise org's id or "" outside
 * one) or a whole org installed at once (org-wide: the org's id, and team "").
 */
export interface InstallationKey {
  enterprise: string;
  team: string;
}

/**
 * One installation of the app (the OAuth install flow, several workspaces): who the bot is
 * there and its bot token, sealed (slack/installations/bot-token-seal.ts: AES-256-GCM under
 * TOKEN_ENCRYPTION_KEY, bound to its key below): the store never holds a token in clear.
 */
export interface StoredInstallation extends InstallationKey {
  teamName: string | null;
  enterpriseName: string | null;
  /** The Slack app it is an installation of. */
  appId: string | null;
  botUserId: string;
  botId: string;
  /** The bot scopes granted. */
  botScopes: string[];
  /** The bot token, sealed. */
  sealedBotToken: Buffer;
  /** Who installed it. */
  installerUserId: string | null;
  /** When it was (last) installed, epoch ms on the store's clock. */
  installedAt: number;
}

/** Where an event or request comes from: its workspace, and its org when it has one. */
export interface InstallationQuery {
  team?: string | undefined;
  enterprise?: string | undefined;
}

/**
 * The app's installations, one per workspace or org-wide org. With SLACK_BOT_TOKEN alone
 * (one workspace) it stays empty.
 */
export interface InstallationStore {
  /** Keeps an installation now, replacing the one of the same key (a reinstall) or team. */
  put(installation: Omit<StoredInstallation, "installedAt">): Promise<StoredInstallation>;
  /**
   * The installation serving a workspace: its own, else the org-wide installation of its
   * org (which answers for every workspace of the org): the org the query names, else the one
   * recorded for the workspace (placeWorkspace). Asked with only an org: the org-wide one.
   */
  find(query: InstallationQuery): Promise<StoredInstallation | undefined>;
  /**
   * Records that workspace `team` is in org `enterprise` (a request of it said so), so that
   * its org-wide installation is found with its team alone: after a restart, an answer resumed
   * there needs its token before any request of the workspace arrives.
   */
  placeWorkspace(team: string, enterprise: string): Promise<void>;
  /** The workspaces recorded in an org (placeWorkspace), in no set order. */
  workspacesOf(enterprise: string): Promise<string[]>;
  /** Forgets it (app_uninstalled, tokens_revoked); whether there was one. */
  remove(key: InstallationKey): Promise<boolean>;
  /** Every installation, oldest install first. */
  list(): Promise<StoredInstallation[]>;
  /** Replaces the sealed bot tokens of these installations, all or none (key rotation). */
  reseal(rows: readonly (InstallationKey & { sealedBotToken: Buffer })[]): Promise<void>;
}

/** The stores `Stores.exclusively` hands its work, in its transaction. */
export type ExclusiveStores = Pick<Stores, "linkedTokens" | "installations">;

/** Everything the bot keeps, and how to reach and release it. */
export interface Stores {
  conversations: ConversationStore;
  turns: TurnStore;
  settings: SettingsStore;
  feedback: FeedbackStore;
  linkedTokens: LinkedTokenStore;
  assistantChoices: AssistantChoiceStore;
  leases: LeaseStore;
  installations: InstallationStore;
  /**
   * Runs `fn` as the database's only user, in one transaction, on the stores it is given
   * (which write in that transaction): its writes all stand or, when it throws, none does.
   * Throws DatabaseInUse, before `fn` runs, while a bot is running on the same database
   * (`npm run rotate-key`). SQLite: the file's lock, held from the open, already keeps every
   * other process out. PostgreSQL: every bot's store connection holds a shared advisory lock
   * (postgres/replica-lock.ts), and a live conversation lease also counts.
   */
  exclusively<T>(fn: (stores: ExclusiveStores) => Promise<T>): Promise<T>;
  /** Whether the storage answers (readiness). */
  ping(): Promise<boolean>;
  /**
   * Resolves once every write made before the call would survive a power cut, not only the
   * process being killed, without holding the event loop: awaited before Slack is told a
   * question arrived and before a request whose attempt was recorded leaves. SQLite: one
   * sync of its log, shared by the writes made meanwhile (sqlite/wal-sync.ts). PostgreSQL:
   * its commits already are.
   */
  durable(): Promise<void>;
  close(): Promise<void>;
}

/** `Stores.exclusively` found a bot running on the database: nothing was done. */
export class DatabaseInUse extends Error {
  constructor(detail?: string) {
    super(
      `a bot is still running on this database: stop every replica first${detail ? ` (${detail})` : ""}`,
    );
    this.name = "DatabaseInUse";
  }
}
