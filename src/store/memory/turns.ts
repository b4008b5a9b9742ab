import { randomUUID } from "node:crypto";
import type { Immediate } from "../immediate.js";
import type { TurnStore } from "../stores.js";
import { applyTurnEvent, type NewTurn, receivedTurn, type Turn, type TurnEvent } from "../turn.js";
import { TurnEvents } from "../turn-events.js";

/** Turns in a Map, in arrival order: the core's tests use it in place of SQLite. */
export class MemoryTurnStore extends TurnEvents implements Immediate<TurnStore> {
  private readonly rows = new Map<string, Turn>();
  /** When each finished turn finished, epoch ms, until its texts are purged. */
  private readonly textsKept = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  create(input: NewTurn): Turn | undefined {
    if (this.byMessage(input.team, input.channel, input.messageTs)) return undefined;
    const turn = receivedTurn(input, randomUUID(), this.now());
    this.rows.set(turn.id, turn);
    return turn;
  }

  byId(id: string): Turn | undefined {
    return this.rows.get(id);
  }

  byMessage(team: string, channel: string, messageTs: string): Turn | undefined {
    return this.all().find(
      (t) => t.team === team && t.channel === channel && t.messageTs === messageTs,
    );
  }

  unfinished(): Turn[] {
    return this.all().filter((t) => t.state !== "finished");
  }

  unfinishedIn(conversationId: number): Turn[] {
    return this.unfinished().filter((t) => t.conversationId === conversationId);
  }

  unfinishedInAny(conversationIds: readonly number[]): Turn[] {
    const wanted = new Set(conversationIds);
    const mine = this.unfinished().filter((t) => wanted.has(t.conversationId));
    // A stable sort: each conversation's turns stay in arrival order.
    return mine.sort((a, b) => a.conversationId - b.conversationId);
  }

  activeFor(team: string, channel: string, user: string): Turn[] {
    return this.unfinished().filter(
      (t) => t.team === team && t.channel === channel && t.user === user,
    );
  }

  unfinishedCountBy(team: string, user: string): number {
    return this.unfinished().filter((t) => t.team === team && t.user === user).length;
  }

  conversationsAskedIn(team: string, user: string): number[] {
    const ids = this.all()
      .filter((t) => t.team === team && t.user === user)
      .map((t) => t.conversationId);
    return [...new Set(ids)].sort((a, b) => a - b);
  }

  serviceMessageIds(conversationId: number): Set<string> {
    const ids = this.all()
      .filter((t) => t.conversationId === conversationId && t.serviceMessageId !== null)
      .map((t) => t.serviceMessageId as string);
    return new Set(ids);
  }

  requestStop(id: string, user: string): boolean {
    const turn = this.rows.get(id);
    if (!turn || turn.state === "finished") return false;
    this.rows.set(id, { ...turn, stopRequestedBy: turn.stopRequestedBy ?? user });
    return true;
  }

  purgeTexts(finishedBefore: number, limit: number): number {
    const due = [...this.textsKept]
      .filter(([, finishedAt]) => finishedAt < finishedBefore)
      .sort((a, b) => a[1] - b[1])
      .slice(0, limit);
    for (const [id] of due) {
      const turn = this.rows.get(id) as Turn;
      this.rows.set(id, { ...turn, content: "", serviceContent: null, notes: [], error: null });
      this.textsKept.delete(id);
    }
    return due.length;
  }

  protected apply(id: string, event: TurnEvent): Turn {
    const current = this.rows.get(id);
    if (!current) throw new Error(`turn ${id} does not exist`);
    const next = applyTurnEvent(current, event);
    this.rows.set(id, next);
    if (next.state === "finished") this.textsKept.set(id, this.now());
    return next;
  }

  /** Insertion order is arrival order (Map keeps it). */
  private all(): Turn[] {
    return [...this.rows.values()];
  }
}
