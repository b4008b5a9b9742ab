import type { RunSettings, TurnStore } from "./stores.js";
import type { Turn, TurnEvent } from "./turn.js";

type Recorders = Pick<
  TurnStore,
  | "recordContent"
  | "recordPostAttempt"
  | "recordMessage"
  | "recordRunAttempt"
  | "recordRunNotStarted"
  | "recordRunStart"
  | "recordReplyAttempt"
  | "recordReply"
  | "finish"
>;

/**
 * The typed transition methods of a turn store, each one event of the state machine,
 * over the store's single `apply`. Every implementation extends it, so a transition
 * means the same in SQLite, PostgreSQL and in memory.
 */
export abstract class TurnEvents implements Recorders {
  /**
   * Applies `events` in order (`applyTurnEvent`) to the stored turn and keeps the result, in
   * one write.
   */
  protected abstract apply(id: string, events: readonly TurnEvent[]): Promise<Turn>;

  recordContent(
    id: string,
    content: Parameters<Recorders["recordContent"]>[1],
    options: Parameters<Recorders["recordContent"]>[2] = {},
  ): Promise<Turn> {
    const compose: TurnEvent = { type: "compose", ...content };
    return this.apply(id, options.attempt ? [compose, { type: "post_attempt" }] : [compose]);
  }

  recordPostAttempt(id: string): Promise<Turn> {
    return this.apply(id, [{ type: "post_attempt" }]);
  }

  recordMessage(id: string, serviceMessageId: string): Promise<Turn> {
    return this.apply(id, [{ type: "message", serviceMessageId }]);
  }

  recordRunAttempt(
    id: string,
    settings: RunSettings,
    options: Parameters<Recorders["recordRunAttempt"]>[2] = {},
  ): Promise<Turn> {
    const attempt: TurnEvent = { type: "run_attempt", settings };
    const { message } = options;
    if (message === undefined) return this.apply(id, [attempt]);
    return this.apply(id, [{ type: "message", serviceMessageId: message }, attempt]);
  }

  recordRunNotStarted(id: string): Promise<Turn> {
    return this.apply(id, [{ type: "run_not_started" }]);
  }

  recordRunStart(id: string, run: Parameters<Recorders["recordRunStart"]>[1]): Promise<Turn> {
    return this.apply(id, [{ type: "run_start", ...run }]);
  }

  recordReplyAttempt(id: string, part: number): Promise<Turn> {
    return this.apply(id, [{ type: "reply_attempt", part }]);
  }

  recordReply(id: string, parts: string[]): Promise<Turn> {
    return this.apply(id, [{ type: "reply", parts }]);
  }

  finish(id: string, end: Parameters<Recorders["finish"]>[1]): Promise<Turn> {
    return this.apply(id, [{ type: "finish", ...end }]);
  }
}
