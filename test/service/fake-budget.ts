import type { BudgetKind, BudgetTicket, QueuePosition } from "../../src/budgets/service/budget.js";
import { BudgetCanceled } from "../../src/budgets/service/budget.js";
import type { ClientBudget } from "../../src/service/http/http-options.js";

/**
 * A budget that records what the client asks of it. Tickets are ready at once unless a
 * test scripts a queue for the next ticket with `queueNext`.
 */
export class RecordingBudget implements ClientBudget {
  readonly takes: { user: string; kind: BudgetKind; party: string | undefined }[] = [];
  readonly pauses: { user: string; kind: BudgetKind; untilMs: number }[] = [];
  readonly tickets: ScriptedTicket[] = [];
  #queued: QueuePosition | undefined;

  /** The next ticket waits at this position until the test calls `advance`/`admit` on it. */
  queueNext(position: QueuePosition): void {
    this.#queued = position;
  }

  take(
    user: string,
    kind: BudgetKind,
    options?: { party?: string; signal?: AbortSignal },
  ): BudgetTicket {
    this.takes.push({ user, kind, party: options?.party });
    const ticket = new ScriptedTicket(this.#queued, options?.signal);
    this.#queued = undefined;
    this.tickets.push(ticket);
    return ticket;
  }

  pauseUntil(user: string, kind: BudgetKind, untilMs: number): void {
    this.pauses.push({ user, kind, untilMs });
  }
}

export class ScriptedTicket implements BudgetTicket {
  readonly ready: Promise<void>;
  released = false;
  canceled = false;
  #position: QueuePosition;
  #listeners = new Set<(p: QueuePosition) => void>();
  #resolve!: () => void;
  #reject!: (e: unknown) => void;

  constructor(queued: QueuePosition | undefined, signal?: AbortSignal) {
    this.#position = queued ?? { position: 0, expectedWaitMs: 0 };
    this.ready = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.ready.catch(() => {});
    if (!queued) this.#resolve();
    signal?.addEventListener("abort", () => this.cancel(), { once: true });
  }

  position(): number {
    return this.#position.position;
  }
  expectedWaitMs(): number {
    return this.#position.expectedWaitMs;
  }
  onChange(listener: (p: QueuePosition) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  listenerCount(): number {
    return this.#listeners.size;
  }
  advance(p: QueuePosition): void {
    this.#position = p;
    for (const l of this.#listeners) l(p);
  }
  admit(): void {
    this.advance({ position: 0, expectedWaitMs: 0 });
    this.#resolve();
  }
  cancel(): void {
    if (this.#position.position > 0 && !this.canceled) {
      this.canceled = true;
      this.#reject(new BudgetCanceled("canceled"));
    } else {
      this.release();
    }
  }
  release(): void {
    this.released = true;
  }
}
