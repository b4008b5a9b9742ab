import type { TurnReply } from "./turn/turn-reply.js";

/**
 * A turn this process is working on or holds in a queue: what only memory knows of it.
 * Its record (store/turn.ts) says what was done; this says who stopped it, what to abort,
 * and where it is, so that a stop, the queue and the runner agree without asking the store.
 */
export class LiveTurn {
  /** `waiting` in its conversation's queue, `running` in the runner, `ended` when done. */
  stage: "waiting" | "running" | "ended" = "waiting";
  /** The person who stopped it; set once. */
  stoppedBy: string | undefined;
  /** The run at the service, once it exists. */
  runId: string | undefined;
  /**
   * The stop sent to the service for this turn's run, while it is on its way or once it was
   * taken: a second press (the Stop button and Slack's own stop, a redelivered event) sends
   * no second stop. A stop the service did not take is forgotten, so a press may try again.
   */
  stopping: Promise<boolean> | undefined;
  /** The run outlived the time limit and was stopped for it. */
  timedOut = false;
  /** Why Slack would not show the reply: the turn's work stops, and it ends with this. */
  unshown: unknown;
  /** Aborts the turn's waits (budget queue, thread read, outage backoff), never a POST in flight. */
  readonly waits = new AbortController();
  /**
   * Aborted when this process must leave the turn as stored (its conversation's lease went to
   * another replica): as at a shutdown, but for this turn alone.
   */
  readonly leaving = new AbortController();

  constructor(
    readonly id: string,
    readonly reply: TurnReply,
    readonly conversationId: number,
  ) {}

  get stopped(): boolean {
    return this.stoppedBy !== undefined;
  }
}
