import { randomUUID } from "node:crypto";
import type { TurnStore } from "../stores.js";
import { applyTurnEvent, type NewTurn, receivedTurn, type Turn, type TurnEvent } from "../turn.js";
import { TurnEvents } from "../turn-events.js";

/** Turns in a Map, in arrival order: the core's tests use it in place of SQLite. */
export class MemoryTurnStore extends TurnEvents implements TurnStore {
  private readonly rows = new Map<string, Turn>();

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

  activeFor(team: string, channel: string, user: string): Turn[] {
    return this.unfinished().filter(
      (t) => t.team === team && t.channel === channel && t.user === user,
    );
  }

  unfinishedCountBy(team: string, user: string): number {
    return this.unfinished().filter((t) => t.team === team && t.user === user).length;
  }

  serviceMessageIds(conversationId: number): Set<string> {
    const ids = this.all()
      .filter((t) => t.conversationId === conversationId && t.serviceMessageId !== null)
      .map((t) => t.serviceMessageId as string);
    return new Set(ids);
  }

  protected apply(id: string, event: TurnEvent): Turn {
    const current = this.rows.get(id);
    if (!current) throw new Error(`turn ${id} does not exist`);
    const next = applyTurnEvent(current, event);
    this.rows.set(id, next);
    return next;
  }

  /** Insertion order is arrival order (Map keeps it). */
  private all(): Turn[] {
    return [...this.rows.values()];
  }
}
