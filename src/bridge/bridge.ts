import type { ConversationStore, TurnStore } from "../store/stores.js";
import type { Turn } from "../store/turn.js";
import { ConversationQueue } from "./conversation-queue.js";
import type { Inbound } from "./inbound.js";
import { LiveTurn } from "./live-turn.js";
import type { BridgeLogger, ReplyStrategy } from "./ports.js";
import { TurnReply } from "./turn-reply.js";
import type { TurnRunner } from "./turn-runner.js";

/**
 * `deferred`: recorded while the bot stops, answered at the next start. `over_limit`: the
 * person already has `maxQueuedPerPerson` unfinished turns; recorded as finished, not answered.
 */
export type AcceptResult = "accepted" | "duplicate" | "ignored" | "deferred" | "over_limit";
/** `failed`: the service did not take the stop (after retries); the answer goes on. */
export type StopResult = "stopped" | "failed" | "not_owner" | "not_running";

export interface BridgeDeps {
  conversations: ConversationStore;
  turns: TurnStore;
  runner: TurnRunner;
  logger: BridgeLogger;
  /** The assistant a new conversation talks to. */
  assistantFor: (inbound: Inbound) => string;
  /** How replies reach Slack. */
  replies: ReplyStrategy;
  /** The first words of an answer were shown (metrics). */
  onFirstText?: (turn: Turn) => void;
  /** Most unfinished turns one person may have in a workspace; default no limit. */
  maxQueuedPerPerson?: number;
}

const FILES_NOTE =
  "Files and images aren't passed on to the assistant; it answered your text only.";

/**
 * The core: decides whether a Slack message is answered, records it as a turn before any
 * work starts, and works turns one at a time per conversation.
 */
export class Bridge {
  private readonly queue = new ConversationQueue();
  /** The turns this process holds, waiting or running, by id. */
  private readonly live = new Map<string, LiveTurn>();
  private accepting = true;

  constructor(private readonly deps: BridgeDeps) {}

  /**
   * Records an inbound message and schedules its answer. Returns at once; the answer is
   * worked on after the caller has acknowledged Slack.
   */
  accept(inbound: Inbound): AcceptResult {
    const { conversations, turns } = this.deps;
    if (!this.wouldAnswer(inbound)) return "ignored";
    const key = { team: inbound.team, channel: inbound.channel, threadTs: inbound.threadTs };
    const conversation =
      conversations.find(key) ?? conversations.ensure(key, this.deps.assistantFor(inbound));
    const limit = this.deps.maxQueuedPerPerson ?? Number.POSITIVE_INFINITY;
    const overLimit = turns.unfinishedCountBy(inbound.team, inbound.user) >= limit;
    const turn = turns.create({
      conversationId: conversation.id,
      team: inbound.team,
      channel: inbound.channel,
      threadTs: inbound.threadTs,
      messageTs: inbound.ts,
      user: inbound.user,
      authorTeam: inbound.authorTeam ?? inbound.team,
      content: inbound.text,
      notes: inbound.hasFiles ? [FILES_NOTE] : [],
    });
    if (!turn) return "duplicate";
    if (overLimit) {
      // Kept as finished, so that a Slack retry of this message is not answered later either.
      turns.finish(turn.id, { outcome: "error" });
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
    this.schedule(turn);
    return "accepted";
  }

  /**
   * Whether this message would be answered, read without writing anything: so the Slack edge
   * can refuse a person who may not use the bot before any row exists, and stay silent for
   * messages that would not be answered anyway. Channels: a mention starts or continues a
   * conversation; other thread replies only continue one. DMs: every message is answered.
   */
  wouldAnswer(
    inbound: Pick<Inbound, "team" | "channel" | "threadTs" | "mentioned" | "isDirect">,
  ): boolean {
    if (inbound.mentioned || inbound.isDirect) return true;
    const { team, channel, threadTs } = inbound;
    return this.deps.conversations.find({ team, channel, threadTs }) !== undefined;
  }

  /** Schedules every unfinished turn found in the store (after a restart), in order. */
  resume(): number {
    const unfinished = this.deps.turns.unfinished();
    for (const turn of unfinished) this.schedule(turn);
    if (unfinished.length > 0) {
      this.deps.logger.info({ count: unfinished.length }, "resuming unfinished turns");
    }
    return unfinished.length;
  }

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
    const turn = this.deps.turns.byId(turnId);
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
    const mine = this.deps.turns.activeFor(team, channel, user);
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
    const mine = this.deps.turns.activeFor(team, channel, user).filter(inThread);
    if (mine.length === 0) {
      const theirs = [...this.live.keys()].map((id) => this.deps.turns.byId(id)).find(inThread);
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
  abandon(team: string, gone: Error): number {
    let count = 0;
    for (const live of this.live.values()) {
      const turn = this.deps.turns.byId(live.id);
      if (turn === undefined || turn.team !== team || live.stage === "ended") continue;
      live.unshown ??= gone;
      count++;
      this.deps.runner.stop(live, turn.user).catch((error: unknown) => {
        this.deps.logger.warn({ turn: live.id, err: String(error) }, "could not stop a turn");
      });
    }
    return count;
  }

  /** This person's unfinished turns in this channel, with whether each is running. */
  activeFor(team: string, channel: string, user: string): { turn: Turn; running: boolean }[] {
    // A turn whose ending is being shown is no longer active, though not yet recorded finished.
    return this.deps.turns
      .activeFor(team, channel, user)
      .filter((turn) => this.live.get(turn.id)?.stage !== "ended")
      .map((turn) => ({ turn, running: this.live.get(turn.id)?.stage === "running" }));
  }

  /** The Slack user who asked the question of this turn. */
  ownerOf(turnId: string): string | undefined {
    return this.deps.turns.byId(turnId)?.user;
  }

  /** Stops starting answers: new messages are only recorded, for the next start. */
  close(): void {
    this.accepting = false;
  }

  /** Ends the waits of running turns and starts no queued one; they stay for the next start. */
  shutdown(): void {
    this.close();
    this.deps.runner.shutdown();
  }

  /** Resolves when every scheduled turn has finished. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  get pendingConversations(): number {
    return this.queue.size;
  }

  private schedule(turn: Turn): void {
    const live = new LiveTurn(turn.id, this.replyOf(turn));
    this.live.set(turn.id, live);
    const key = String(turn.conversationId);
    const ahead = this.queue.pending(key);
    // Behind an earlier turn of its thread, a turn shows its placeholder now ("Queued — 1
    // ahead") rather than when its turn comes, so the person sees at once it was heard.
    if (ahead > 0 && turn.replyParts.length === 0) {
      live.reply.open({ kind: "queued", ahead, where: "thread" }).catch((error: unknown) => {
        this.deps.logger.warn(
          { turn: turn.id, err: String(error) },
          "could not post the queued placeholder",
        );
      });
    }
    void this.queue
      .add(key, () => this.deps.runner.run(live))
      .finally(() => this.live.delete(turn.id));
  }

  private replyOf(turn: Turn): TurnReply {
    const onFirstText = this.deps.onFirstText;
    return new TurnReply(
      this.deps.replies,
      this.deps.turns,
      turn,
      onFirstText && (() => onFirstText(turn)),
    );
  }

  private async stopTurn(turn: Turn, user: string): Promise<boolean> {
    // A turn this process does not hold (finished meanwhile, or the bot is stopping).
    const live = this.live.get(turn.id) ?? new LiveTurn(turn.id, this.replyOf(turn));
    return this.deps.runner.stop(live, user);
  }
}
