import type { ConversationStore } from "../store/conversations.js";
import type { Turn, TurnStore } from "../store/turns.js";
import { ConversationQueue } from "./conversation-queue.js";
import type { Inbound } from "./inbound.js";
import type { ReplySink } from "./ports.js";
import { turnReply } from "./turn-reply.js";
import type { BridgeLogger, TurnRunner } from "./turn-runner.js";

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
  /** Shows a placeholder at once for a turn that waits behind an earlier one. */
  replies?: ReplySink;
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
  /** Queued placeholders still being posted, by turn id. */
  private readonly opening = new Map<string, Promise<void>>();
  private accepting = true;

  constructor(private readonly deps: BridgeDeps) {}

  /**
   * Records an inbound message and schedules its answer. Returns at once; the answer is
   * worked on after the caller has acknowledged Slack.
   */
  accept(inbound: Inbound): AcceptResult {
    const { conversations, turns } = this.deps;
    const key = { team: inbound.team, channel: inbound.channel, threadTs: inbound.threadTs };
    let conversation = conversations.find(key);
    // Channels: a mention starts or continues a conversation; other thread replies only
    // continue one. DMs: every message is answered.
    if (!conversation) {
      if (!inbound.mentioned && !inbound.isDirect) return "ignored";
      conversation = conversations.ensure(key, this.deps.assistantFor(inbound));
    }
    const limit = this.deps.maxQueuedPerPerson ?? Number.POSITIVE_INFINITY;
    const overLimit = turns.unfinishedCountBy(inbound.team, inbound.user) >= limit;
    const turn = turns.create({
      conversationId: conversation.id,
      team: inbound.team,
      channel: inbound.channel,
      threadTs: inbound.threadTs,
      messageTs: inbound.ts,
      user: inbound.user,
      content: inbound.text,
      notes: inbound.hasFiles ? [FILES_NOTE] : [],
    });
    if (!turn) return "duplicate";
    if (overLimit) {
      // Kept as finished, so that a Slack retry of this message is not answered later either.
      turns.update(turn.id, { state: "finished", outcome: "error" });
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

  /** This person's unfinished turns in this channel, with whether each is running. */
  activeFor(team: string, channel: string, user: string): { turn: Turn; running: boolean }[] {
    return this.deps.turns
      .activeFor(team, channel, user)
      .map((turn) => ({ turn, running: this.deps.runner.active.has(turn.id) }));
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
    const key = `${turn.team}:${turn.channel}:${turn.threadTs}`;
    const opened = this.placeholder(turn, this.queue.pending(key));
    this.opening.set(turn.id, opened);
    void opened.finally(() => this.opening.delete(turn.id));
    void this.queue.add(key, async () => {
      await opened;
      await this.deps.runner.run(turn.id);
    });
  }

  /**
   * A turn behind an earlier turn of its conversation gets its placeholder now ("Queued —
   * 1 ahead") rather than when its turn comes, so the person sees at once that it was
   * heard. The runner finds the placeholder's ts on the turn and carries on from it.
   */
  private async placeholder(turn: Turn, ahead: number): Promise<void> {
    const { replies, turns, logger } = this.deps;
    if (!replies || ahead === 0 || turn.replyParts.length > 0) return;
    const reply = turnReply(replies, turns, turn);
    try {
      await reply.open({ body: "", phase: { kind: "queued", ahead }, notes: turn.notes });
    } catch (error) {
      logger.warn({ turn: turn.id, err: String(error) }, "could not post the queued placeholder");
    }
  }

  private async stopTurn(turn: Turn, user: string): Promise<boolean> {
    // A stop racing the queued placeholder waits for it, so the stopped turn ends in that
    // message rather than in a second one beside a placeholder left spinning.
    await this.opening.get(turn.id);
    return this.deps.runner.requestStop(turn.id, user);
  }
}
