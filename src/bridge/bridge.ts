import type { ConversationStore } from "../store/conversations.js";
import type { Turn, TurnStore } from "../store/turns.js";
import { ConversationQueue } from "./conversation-queue.js";
import type { Inbound } from "./inbound.js";
import type { BridgeLogger, TurnRunner } from "./turn-runner.js";

export type AcceptResult = "accepted" | "duplicate" | "ignored";
export type StopResult = "stopped" | "not_owner" | "not_running";

export interface BridgeDeps {
  conversations: ConversationStore;
  turns: TurnStore;
  runner: TurnRunner;
  logger: BridgeLogger;
  /** The assistant a new conversation talks to. */
  assistantFor: (inbound: Inbound) => string;
}

const FILES_NOTE =
  "Files and images aren't passed on to the assistant; it answered your text only.";

/**
 * The core: decides whether a Slack message is answered, records it as a turn before any
 * work starts, and works turns one at a time per conversation.
 */
export class Bridge {
  private readonly queue = new ConversationQueue();
  private accepting = true;

  constructor(private readonly deps: BridgeDeps) {}

  /**
   * Records an inbound message and schedules its answer. Returns at once; the answer is
   * worked on after the caller has acknowledged Slack.
   */
  accept(inbound: Inbound): AcceptResult {
    if (!this.accepting) return "ignored";
    const { conversations, turns } = this.deps;
    const key = { team: inbound.team, channel: inbound.channel, threadTs: inbound.threadTs };
    let conversation = conversations.find(key);
    // Channels: a mention starts or continues a conversation; other thread replies only
    // continue one. DMs: every message is answered.
    if (!conversation) {
      if (!inbound.mentioned && !inbound.isDirect) return "ignored";
      conversation = conversations.ensure(key, this.deps.assistantFor(inbound));
    }
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

  /** Stops one turn: only the person who asked may. */
  async stop(turnId: string, user: string): Promise<StopResult> {
    const turn = this.deps.turns.byId(turnId);
    if (!turn || turn.state === "finished") return "not_running";
    if (turn.user !== user) return "not_owner";
    await this.stopTurn(turn, user);
    return "stopped";
  }

  /** Stops every unfinished turn of this person in this channel; returns how many. */
  async stopAllFor(team: string, channel: string, user: string): Promise<Turn[]> {
    const mine = this.deps.turns.activeFor(team, channel, user);
    await Promise.all(mine.map((turn) => this.stopTurn(turn, user)));
    return mine;
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

  /** Stops taking new messages. */
  close(): void {
    this.accepting = false;
  }

  /** Resolves when every scheduled turn has finished. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  get pendingConversations(): number {
    return this.queue.size;
  }

  private schedule(turn: Turn): void {
    void this.queue.add(`${turn.team}:${turn.channel}:${turn.threadTs}`, () =>
      this.deps.runner.run(turn.id),
    );
  }

  private stopTurn(turn: Turn, user: string): Promise<void> {
    return this.deps.runner.requestStop(turn.id, user);
  }
}
