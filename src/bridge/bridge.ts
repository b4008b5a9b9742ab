import type {
  AssistantPick,
  Conversation,
  ConversationStore,
  LeaseStore,
  TurnStore,
} from "../store/stores.js";
import type { Turn } from "../store/turn.js";
import { type Clock, systemClock } from "../time.js";
import { ConversationLeases } from "./conversation-leases.js";
import { ConversationQueue } from "./conversation-queue.js";
import type { Inbound } from "./inbound.js";
import type { BridgeLogger, ReplyStrategy } from "./ports.js";
import { type StopReason, TurnLife } from "./turn/turn-life.js";
import { TurnReply } from "./turn/turn-reply.js";
import type { TurnRunner } from "./turn/turn-runner.js";
import type { SettingsRead } from "./turn/turn-step.js";

/**
 * `deferred`: recorded while the bot stops, answered at the next start. `over_limit`: the
 * person already has `maxQueuedPerPerson` unfinished turns; recorded as finished, without its
 * text, not answered.
 */
export type AcceptResult = "accepted" | "duplicate" | "ignored" | "deferred" | "over_limit";
/** `failed`: the service did not take the stop (after retries); the answer goes on. */
export type StopResult = "stopped" | "failed" | "not_owner" | "not_running";

/** This process among the replicas that share the database (conversation-leases.ts). */
export interface ReplicaOptions {
  holder: string;
  leaseTtlMs: number;
  sweepMs: number;
}

export interface BridgeDeps {
  conversations: ConversationStore;
  turns: TurnStore;
  leases: LeaseStore;
  replica: ReplicaOptions;
  /** For the leases' renewals and sweeps, and when a record read; default the system clock. */
  clock?: Clock;
  runner: TurnRunner;
  logger: BridgeLogger;
  /** The assistant a new conversation talks to: an id, or a choice its record reads. */
  assistantFor: (inbound: Inbound) => string | AssistantPick;
  /** How replies reach Slack. */
  replies: ReplyStrategy;
  /** The first words of an answer were shown (metrics). */
  onFirstText?: (turn: Turn) => void;
  /** Most unfinished turns one person may have in a workspace; default no limit. */
  maxQueuedPerPerson?: number;
  /** A conversation was taken over from a replica whose lease had expired (metrics). */
  onTakeover?: () => void;
  /**
   * Resolves once every write made so far would survive a power cut (Stores.durable);
   * default: at once.
   */
  durable?: () => Promise<void>;
}

/**
 * The core: decides whether a Slack message is answered, records it as a turn before any
 * work starts, and works turns one at a time per conversation. With several replicas on one
 * database, a conversation's turns run in the replica that holds its lease: whichever replica
 * records a turn claims the conversation, or leaves the turn to the holder, which reads its
 * conversation's unfinished turns again after each one.
 */
export class Bridge {
  private readonly queue = new ConversationQueue();
  /** The turns this process holds, waiting or running, by id. */
  private readonly live = new Map<string, TurnLife>();
  /**
   * Per conversation, when the reply of the turn last scheduled stands in the thread: a turn
   * queued behind it posts its placeholder only then, so that replies stand in the order of
   * the questions, however long the first one waits for its first words.
   */
  private readonly lastShown = new Map<string, Promise<void>>();
  /**
   * The conversation of each turn scheduled here until it is found finished: one still
   * unfinished once its queue has drained failed here, and is not run again until a restart.
   */
  private readonly ranHere = new Map<string, number>();
  private readonly leases: ConversationLeases;
  /** Conversations of turns just accepted, attended once Slack has been answered (afterAck). */
  private readonly attending = new Set<Promise<void>>();
  /**
   * Per conversation, the hand-on work under way (attend, recheck, drained, a stop's claim),
   * one at a time: each reads the store and then claims, schedules or releases, so none may
   * act on a read another one's write has made stale (a release after a claim it did not see).
   */
  private readonly handing = new Map<number, Promise<unknown>>();
  private accepting = true;
  private readonly clock: Clock;

  constructor(private readonly deps: BridgeDeps) {
    const { holder, leaseTtlMs, sweepMs } = deps.replica;
    this.clock = deps.clock ?? systemClock;
    this.leases = new ConversationLeases(
      deps.leases,
      { holder, ttlMs: leaseTtlMs, sweepMs, clock: this.clock, logger: deps.logger },
      {
        attend: (id) => this.attend(id),
        recheck: (ids) => this.recheck(ids),
        lost: (id) => this.leave(id),
        takenOver: () => deps.onTakeover?.(),
      },
    );
  }

  /** Resolves once every write made so far would survive a power cut (Stores.durable). */
  readonly durable = (): Promise<void> => this.deps.durable?.() ?? Promise.resolve();

  /**
   * Records an inbound message and schedules its answer. Resolves once the turn is recorded
   * (the caller acknowledges Slack only then); the answer is worked on after that.
   *
   * Across its awaits: the conversation is an upsert on its thread's unique key, and the turn
   * an insert on its message's, so two deliveries of one message (a Slack retry, another
   * replica) record one turn and the other is a duplicate. The per-person limit is counted by
   * the insert itself: questions of one person arriving at the same instant may pass it
   * together. A question that starts its thread is recorded in one write with its conversation
   * (TurnStore.record: on PostgreSQL, one round trip before Slack is answered).
   */
  async accept(inbound: Inbound): Promise<AcceptResult> {
    const { conversations, turns } = this.deps;
    const key = { team: inbound.team, channel: inbound.channel, threadTs: inbound.threadTs };
    const asked = inbound.mentioned || inbound.isDirect;
    // A question that starts its thread has no conversation yet (a redelivery's, record finds).
    const found =
      asked && inbound.ts === inbound.threadTs ? undefined : await conversations.find(key);
    // As wouldAnswer decides, with the one lookup.
    if (!found && !asked) return "ignored";
    const { conversation, turn, overLimit, leased, settings } = await turns.record({
      ...(found && { conversation: found }),
      // Taken in the record's write when the turn is its conversation's only unfinished one.
      ...(this.accepting && { lease: this.leases.forRecord }),
      assistant: this.deps.assistantFor(inbound),
      ...(this.deps.maxQueuedPerPerson !== undefined && { limit: this.deps.maxQueuedPerPerson }),
      team: inbound.team,
      channel: inbound.channel,
      threadTs: inbound.threadTs,
      messageTs: inbound.ts,
      user: inbound.user,
      authorTeam: inbound.authorTeam ?? inbound.team,
      content: inbound.text,
      files: inbound.files,
      notes: [],
    });
    // Held from now on, whatever follows: should the turn not be scheduled below (the record
    // not brought to the disk, say), the sweep's look at what this replica holds runs it.
    if (leased) this.leases.adopt(conversation.id);
    // On the disk before Slack is told it arrived (a power cut must not lose it); a retry's
    // first delivery may still be on its way there.
    await this.durable();
    if (!turn) return "duplicate";
    if (overLimit) {
      // Recorded finished, so that a Slack retry of this message is not answered later either.
      const limit = this.deps.maxQueuedPerPerson;
      this.deps.logger.info({ turn: turn.id, limit }, "turn refused: too many queued turns");
      return "over_limit";
    }
    if (!this.accepting) {
      this.deps.logger.info({ turn: turn.id }, "turn recorded for the next start");
      return "deferred";
    }
    this.deps.logger.info(
      { turn: turn.id, team: turn.team, channel: turn.channel, conversation: conversation.id },
      "turn accepted",
    );
    if (leased) {
      // Held by the record itself, with no other turn to run first: scheduled now (a stop from
      // now on finds it running here) on the records just written, and run once Slack has
      // been answered, without a claim of its own.
      let acknowledged: () => void = () => undefined;
      const begins = new Promise<void>((resolve) => (acknowledged = resolve));
      const read = settings && { settings, at: this.clock.now() };
      this.schedule(turn, false, conversation, { begins, ...(read && { settings: read }) });
      this.afterAck(async () => {
        this.deps.runner.expect(turn, conversation);
        acknowledged();
      });
      return "accepted";
    }
    this.afterAck(() => {
      this.deps.runner.expect(turn, conversation);
      return this.attend(conversation.id);
    });
    return "accepted";
  }

  /**
   * Whether this person already has as many unfinished turns as they may: a message of
   * theirs now is recorded as `over_limit`, not answered. Read without writing anything, so
   * the Slack edge can spend nothing more (no name lookups) on a message that will not be
   * answered.
   */
  async overLimit(team: string, user: string): Promise<boolean> {
    const limit = this.deps.maxQueuedPerPerson;
    if (limit === undefined) return false;
    return (await this.deps.turns.unfinishedCountBy(team, user)) >= limit;
  }

  /**
   * Whether this message would be answered, read without writing anything: so the Slack edge
   * can refuse a person who may not use the bot before any row exists, and stay silent for
   * messages that would not be answered anyway. Channels: a mention starts or continues a
   * conversation; other thread replies only continue one. DMs: every message is answered.
   */
  async wouldAnswer(
    inbound: Pick<Inbound, "team" | "channel" | "threadTs" | "mentioned" | "isDirect">,
  ): Promise<boolean> {
    if (inbound.mentioned || inbound.isDirect) return true;
    const { team, channel, threadTs } = inbound;
    return (await this.deps.conversations.find({ team, channel, threadTs })) !== undefined;
  }

  /**
   * Takes on the unfinished work nobody holds (after a restart, or a replica's death), then
   * keeps looking for it; returns how many turns were scheduled now.
   */
  async resume(): Promise<number> {
    const before = this.live.size;
    await this.leases.start();
    const resumed = this.live.size - before;
    if (resumed > 0) this.deps.logger.info({ count: resumed }, "resuming unfinished turns");
    return resumed;
  }

  /** Leases held by this process (metrics). */
  get leasesHeld(): number {
    return this.leases.count;
  }

  /** What the bridge's gauges read at scrape time (metrics.watch). */
  readonly gauges = {
    activeConversations: (): number => this.pendingConversations,
    leasesHeld: (): number => this.leasesHeld,
  };

  /**
   * Stops one turn: only the person who asked may, and only from the channel the turn is in
   * (a forged action naming a turn of another channel stops nothing and learns nothing).
   * Every Slack entry point passes `where`; only in-process callers may leave it out.
   */
  async stop(
    turnId: string,
    user: string,
    where?: { team: string | undefined; channel: string | undefined },
  ): Promise<StopResult> {
    const turn = await this.deps.turns.byId(turnId);
    if (!turn || turn.state === "finished") return "not_running";
    const elsewhere =
      where !== undefined &&
      (turn.channel !== where.channel || (where.team !== undefined && turn.team !== where.team));
    if (elsewhere) return "not_running";
    if (turn.user !== user) return "not_owner";
    return (await this.stopTurn(turn, user)) ? "stopped" : "failed";
  }

  /** Stops every unfinished turn of this person in this channel; says which could not be. */
  async stopAllFor(
    team: string,
    channel: string,
    user: string,
  ): Promise<{ stopped: Turn[]; failed: Turn[] }> {
    const mine = await this.deps.turns.activeFor(team, channel, user);
    const results = await Promise.all(mine.map((turn) => this.stopTurn(turn, user)));
    return {
      stopped: mine.filter((_, i) => results[i]),
      failed: mine.filter((_, i) => !results[i]),
    };
  }

  /**
   * Stops this person's unfinished turns in one thread: what Slack's own stop control of the
   * thread's answer asks (`agent_session_stopped`), and a native stream that Slack says the
   * person stopped. As with the Stop button only the asker's turns stop; when the thread's
   * work is someone else's, nothing changes and `asker` names whose it is.
   */
  async stopTurnOf(
    team: string,
    channel: string,
    threadTs: string,
    user: string,
  ): Promise<{ result: StopResult; asker?: string }> {
    const inThread = (turn: Turn | undefined): turn is Turn =>
      turn !== undefined &&
      turn.state !== "finished" &&
      turn.team === team &&
      turn.channel === channel &&
      turn.threadTs === threadTs &&
      this.live.get(turn.id)?.stage !== "ended";
    const mine = (await this.deps.turns.activeFor(team, channel, user)).filter(inThread);
    if (mine.length === 0) {
      const live = await Promise.all([...this.live.keys()].map((id) => this.deps.turns.byId(id)));
      const theirs = live.find(inThread);
      return theirs ? { result: "not_owner", asker: theirs.user } : { result: "not_running" };
    }
    const results = await Promise.all(mine.map((turn) => this.stopTurn(turn, user)));
    return { result: results.every(Boolean) ? "stopped" : "failed" };
  }

  /**
   * A workspace removed the app (or its bot token was revoked): its turns stop where they
   * are. Nothing can be shown there any more, so each ends without a word in Slack (`gone`
   * is why, for the log) and its run at the service, if any, is stopped. How many stopped.
   */
  async abandon(team: string, gone: Error): Promise<number> {
    let count = 0;
    for (const life of [...this.live.values()]) {
      const turn = await this.deps.turns.byId(life.id);
      // The stage as it is now, after the read: a turn that ended meanwhile is left alone.
      if (turn === undefined || turn.team !== team || life.stage === "ended") continue;
      count++;
      this.stopLive(life, { kind: "uninstalled", error: gone });
    }
    return count;
  }

  /** This person's unfinished turns in this channel, with whether each is running. */
  async activeFor(
    team: string,
    channel: string,
    user: string,
  ): Promise<{ turn: Turn; running: boolean }[]> {
    // A turn whose ending is being shown is no longer active, though not yet recorded finished.
    return (await this.deps.turns.activeFor(team, channel, user))
      .filter((turn) => this.live.get(turn.id)?.stage !== "ended")
      .map((turn) => ({ turn, running: this.live.get(turn.id)?.underway === true }));
  }

  /** The Slack user who asked the question of this turn. */
  async ownerOf(turnId: string): Promise<string | undefined> {
    return (await this.deps.turns.byId(turnId))?.user;
  }

  /** Stops starting answers: new messages are only recorded, for the next start. */
  close(): void {
    this.accepting = false;
  }

  /** Ends the waits of running turns and starts no queued one; they stay for the next start. */
  shutdown(): void {
    this.close();
    for (const life of this.live.values()) this.stopLive(life, { kind: "shutdown" });
  }

  /**
   * Hands every conversation lease back, once the turns have stopped: another replica takes
   * them on at its next sweep instead of waiting for them to expire.
   */
  handBack(): Promise<number> {
    return this.leases.handBack();
  }

  /** Resolves when every accepted turn has been scheduled and every scheduled one finished. */
  async idle(): Promise<void> {
    while (this.attending.size > 0 || this.handing.size > 0 || this.queue.size > 0) {
      await Promise.all([...this.attending, ...this.handing.values()]);
      await this.queue.idle();
    }
  }

  get pendingConversations(): number {
    return this.queue.size;
  }

  /** Claims the conversation and schedules its unfinished turns not yet scheduled here. */
  private attend(conversationId: number): Promise<void> {
    return this.handOn(conversationId, async () => {
      if (!this.accepting) return;
      // Read with the claim, one round trip: every turn recorded before it is in the read, and
      // one recorded while or after it is found by the holder's next look (drained, the sweep's
      // recheck). The conversation is read beside them, for the first of them to run on.
      const read = await this.leases.claimReading(conversationId);
      if (read && this.accepting && this.leases.holds(conversationId)) {
        this.scheduleNew(read.unfinished, read.conversation);
      }
    });
  }

  /** Schedules the turns of conversations this process holds that are not scheduled here yet. */
  private async recheck(conversationIds: number[]): Promise<void> {
    if (!this.accepting) return;
    const unfinished = await this.deps.turns.unfinishedInAny(conversationIds);
    await Promise.all(
      conversationIds.map((id) =>
        this.handOn(id, async () => {
          // Held still, now that the hand-on work before this one has run (it may have released).
          if (!this.accepting || !this.leases.holds(id)) return;
          this.scheduleNew(unfinished.filter((t) => t.conversationId === id));
        }),
      ),
    );
  }

  /**
   * One conversation's unfinished turns, in order: those not yet run or scheduled here. The
   * conversation, when it was read with them, is what the first one runs on.
   */
  private scheduleNew(unfinished: readonly Turn[], conversation?: Conversation): void {
    const fresh = unfinished.filter(
      (turn) => !this.live.has(turn.id) && !this.ranHere.has(turn.id),
    );
    for (const [i, turn] of fresh.entries()) {
      this.schedule(turn, i < fresh.length - 1, i === 0 ? conversation : undefined);
    }
  }

  /**
   * The conversation's queue here is empty: run what other replicas recorded meanwhile, or
   * hand the lease back. A turn that ran here and is still unfinished keeps the lease: it is
   * not run again until the next start, by any replica.
   */
  private drained(conversationId: number): Promise<void> {
    return this.handOn(conversationId, () => this.drainedNow(conversationId));
  }

  private async drainedNow(conversationId: number): Promise<void> {
    // Work scheduled since its queue emptied (a recheck, an attend): its end drains again.
    if (this.queue.pending(String(conversationId)) > 0) return;
    if (!this.accepting || !this.leases.holds(conversationId)) return;
    // Given back unless a turn is left, in one statement: a turn another replica records after
    // it finds the lease free, and its own claim runs it.
    const left = await this.leases.releaseIfDone(conversationId);
    this.forgetRan(conversationId, (id) => !left.some((turn) => turn.id === id));
    if (left.some((turn) => this.ranHere.has(turn.id))) {
      this.deps.logger.warn({ conversation: conversationId }, "a turn was left unfinished");
      return;
    }
    // Held: as attend, within this hand-on work (a queued attend would come after it).
    if (left.length > 0 && this.accepting) this.scheduleNew(left);
  }

  private forgetRan(conversationId: number, which: (turnId: string) => boolean): void {
    for (const [id, conversation] of this.ranHere) {
      if (conversation === conversationId && which(id)) this.ranHere.delete(id);
    }
  }

  /**
   * The lease is gone: this process stops working on the conversation, leaving it as stored
   * for the replica that holds it now (or for this one, should it claim it again).
   */
  private leave(conversationId: number): void {
    this.forgetRan(conversationId, () => true);
    for (const life of this.live.values()) {
      if (life.conversationId === conversationId) this.stopLive(life, { kind: "lease_lost" });
    }
  }

  /**
   * Queues the turn in its conversation. `followed`: turns scheduled with it come after it
   * (recorded elsewhere, or left by a replica): its reply opens now, so that it stands above
   * theirs in the thread. `start`: when a turn recorded here may begin (once Slack has been
   * answered), and the asker's settings read with its record.
   */
  private schedule(
    turn: Turn,
    followed = false,
    conversation?: Conversation,
    start?: { begins: Promise<void>; settings?: SettingsRead },
  ): void {
    const life = new TurnLife(turn, this.replyOf(turn));
    this.live.set(turn.id, life);
    this.ranHere.set(turn.id, turn.conversationId);
    const key = String(turn.conversationId);
    const ahead = this.queue.pending(key);
    const before = ahead > 0 ? this.lastShown.get(key) : undefined;
    // Behind an earlier turn of its thread, a turn shows its placeholder ("Queued — 1 ahead")
    // as soon as the earlier reply stands, not when its turn comes, so the person sees at once
    // it was heard.
    if ((ahead > 0 || followed) && turn.replyParts.length === 0) {
      const phase =
        ahead > 0
          ? ({ kind: "queued", ahead, where: "thread" } as const)
          : ({ kind: turn.runId ? "working" : "starting" } as const);
      const open = () =>
        life.reply.open(phase).catch((error: unknown) => {
          this.deps.logger.warn(
            { turn: turn.id, err: String(error) },
            "could not post the placeholder",
          );
        });
      if (before) void before.then(open);
      else void open();
    }
    this.lastShown.set(key, life.reply.shown);
    void this.queue
      // First in its conversation's queue, it runs on the records just read.
      .add(key, async () => {
        await start?.begins;
        return ahead === 0
          ? this.deps.runner.run(life, turn, conversation, start?.settings)
          : this.deps.runner.run(life);
      })
      .finally(() => {
        life.reply.abandon();
        this.live.delete(turn.id);
        if (this.queue.pending(key) === 0) {
          this.lastShown.delete(key);
          void this.drained(turn.conversationId);
        }
      });
  }

  /**
   * Runs `work` once the event being handled has been acknowledged: the turn is recorded
   * before Slack is answered, but claiming its conversation and the turn's first steps
   * (store round trips, budget takes) need not hold the answer back. Slack allows 3 s and a
   * person sees nothing of it, but every replica's acknowledgements queue behind that work.
   */
  private afterAck(work: () => Promise<void>): void {
    const done = new Promise<void>((resolve) => {
      setImmediate(() => {
        void work().finally(resolve);
      });
    });
    this.attending.add(done);
    void done.then(() => this.attending.delete(done));
  }

  /**
   * Runs `work` after the conversation's hand-on work before it. A store failure is logged,
   * never thrown: the sweep finds the work again.
   */
  private handOn(conversationId: number, work: () => Promise<void>): Promise<void> {
    return this.serially(conversationId, work).catch((error: unknown) => {
      this.deps.logger.warn({ err: String(error) }, "could not hand a conversation on");
    });
  }

  /** `work` after the conversation's hand-on work before it; its result, or its failure. */
  private serially<T>(conversationId: number, work: () => Promise<T>): Promise<T> {
    const before = this.handing.get(conversationId) ?? Promise.resolve();
    const next = before.then(work, work);
    const settled = next.catch(() => undefined);
    this.handing.set(conversationId, settled);
    void settled.then(() => {
      if (this.handing.get(conversationId) === settled) this.handing.delete(conversationId);
    });
    return next;
  }

  private replyOf(turn: Turn): TurnReply {
    const onFirstText = this.deps.onFirstText;
    return new TurnReply(
      this.deps.replies,
      this.deps.turns,
      turn,
      onFirstText && (() => onFirstText(turn)),
      this.durable,
    );
  }

  /**
   * A person's stop (the Stop button, `/assistant stop`, Slack's own stop control), wherever
   * the turn is run: here, by its life; a turn whose run exists or that nobody holds, by a
   * life made for the stop; one another replica holds before its run exists, by a request on
   * its row, which that replica's runner heeds as this stop (TurnRunner.stop, either way).
   */
  private async stopTurn(turn: Turn, user: string): Promise<boolean> {
    const person: StopReason = { kind: "person", user };
    const life = this.live.get(turn.id);
    if (life) return this.deps.runner.stop(life, person);
    // Its run exists: stopped at the service, whichever replica follows it sees it end.
    if (turn.runId !== null) return this.deps.runner.stop(this.unheld(turn), person);
    const id = turn.conversationId;
    const claimed = await this.serially(id, () => this.leases.claim(id));
    // Another replica holds the conversation: its runner stops the turn at its next step.
    if (!claimed) return this.deps.turns.requestStop(turn.id, user);
    // Nobody does (finished meanwhile, recorded while stopping, a replica died): ended here.
    // The runner reads the turn again before it writes its end, and ends a finished one never.
    try {
      return await this.deps.runner.stop(this.unheld(turn), person);
    } finally {
      void this.drained(id);
    }
  }

  /** A stop that nobody waits for (an uninstall, a lost lease, a shutdown): failures logged. */
  private stopLive(life: TurnLife, reason: StopReason): void {
    this.deps.runner.stop(life, reason).catch((error: unknown) => {
      this.deps.logger.warn({ turn: life.id, err: String(error) }, "could not stop a turn");
    });
  }

  /** A turn this process does not run, as the runner's stop takes it. */
  private unheld(turn: Turn): TurnLife {
    return new TurnLife(turn, this.replyOf(turn));
  }
}
