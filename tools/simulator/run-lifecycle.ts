import { isEndStatus } from "../../src/service/schemas.js";
import type { AnswerPlan, SimulatorStep } from "./answers.js";
import { modelForSettings, type SimulatorRun } from "./resources.js";
import type { RunStreamEvent } from "./sse.js";

/**
 * One run moving through its statuses: queued → (queueDelayMs) in_progress → its answer
 * written chunk by chunk at the plan's token rate, its scripted step events interleaved
 * (one tick each) → completed | failed, or canceled by a
 * stop at any point before that. The live `run` object is what GET /v1/run/{id} returns;
 * listeners (streams, waiters) hear every change as a RunStreamEvent.
 */

export type RunListener = (event: RunStreamEvent) => void;

export interface RunLifecycleOptions {
  /** Time spent queued before in_progress, in milliseconds. */
  queueDelayMs: number;
  /** Called once when the run reaches an end status, before listeners hear of it. */
  onEnd: (lifecycle: RunLifecycle) => void;
}

export class RunLifecycle {
  readonly run: SimulatorRun;
  /** The creator's bearer token: only it may see the run. */
  readonly token: string;
  /** The answer text written so far. */
  written = "";
  /** Each step reported so far, as it last was, in the order the steps began. */
  readonly steps = new Map<string, SimulatorStep>();
  readonly #plan: AnswerPlan;
  readonly #options: RunLifecycleOptions;
  readonly #listeners = new Set<RunListener>();
  #timer: NodeJS.Timeout | undefined;
  #next = 0;
  #nextStep = 0;

  constructor(run: SimulatorRun, token: string, plan: AnswerPlan, options: RunLifecycleOptions) {
    this.run = run;
    this.token = token;
    this.#plan = plan;
    this.#options = options;
  }

  get ended(): boolean {
    return isEndStatus(this.run.status);
  }

  /** The model the run reports as `modelUsed` once it works. */
  get model(): string {
    return this.#plan.modelUsed ?? modelForSettings(this.run.settings);
  }

  start(): void {
    this.#timer = setTimeout(() => this.#begin(), this.#options.queueDelayMs);
  }

  /** Adds a listener; the returned function removes it. */
  subscribe(listener: RunListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stop (POST /v1/runs/{id}/stop): canceled with the text so far; no-op once ended. */
  stop(): void {
    if (this.ended) return;
    this.#end("canceled");
  }

  /** Forgets timers and listeners without changing the run (the simulator is closing). */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#listeners.clear();
  }

  #begin(): void {
    this.run.status = "in_progress";
    this.run.modelUsed = this.model;
    this.#emit({ type: "status", written: this.written, run: this.run });
    if (this.#shouldFail()) {
      this.#end("failed");
      return;
    }
    this.#schedule();
  }

  /**
   * A chunk is a token, so chunks are `1000 / tokensPerSecond` ms apart. Timers cannot
   * fire more often than every millisecond, so a faster rate writes several chunks per tick.
   */
  #schedule(): void {
    const intervalMs = 1000 / this.#plan.tokensPerSecond;
    const perTick = intervalMs >= 1 ? 1 : Math.ceil(1 / intervalMs);
    this.#timer = setTimeout(() => this.#writeChunks(perTick), Math.floor(intervalMs));
  }

  #writeChunks(count: number): void {
    const { chunks, steps } = this.#plan;
    for (let i = 0; i < count; i++) {
      const due = steps[this.#nextStep];
      const textLeft = this.#next < chunks.length;
      if (due !== undefined && (!textLeft || due.atChars <= this.written.length)) {
        this.#nextStep += 1;
        this.steps.set(due.step.id, due.step);
        this.#emit({ type: "step", step: due.step, written: this.written, run: this.run });
        continue;
      }
      if (!textLeft) break;
      const text = chunks[this.#next] ?? "";
      this.#next += 1;
      this.written += text;
      this.#emit({ type: "delta", text, written: this.written, run: this.run });
      if (this.#shouldFail()) {
        this.#end("failed");
        return;
      }
    }
    if (this.#next < chunks.length || this.#nextStep < steps.length) this.#schedule();
    else if (this.#plan.failure !== undefined) this.#end("failed");
    else if (!this.#plan.hang) this.#end("completed");
  }

  #shouldFail(): boolean {
    const failure = this.#plan.failure;
    return failure !== undefined && this.written.length >= failure.afterChars;
  }

  #end(status: "completed" | "failed" | "canceled"): void {
    clearTimeout(this.#timer);
    this.run.status = status;
    if (status === "completed") this.run.output = [{ type: "text", text: this.written }];
    if (status === "canceled" && this.written !== "") {
      this.run.output = [{ type: "text", text: this.written }];
    }
    if (status === "failed") this.run.error = this.#plan.failure?.error ?? "failed";
    this.#options.onEnd(this);
    this.#emit({ type: "end", written: this.written, run: this.run });
    this.#listeners.clear();
  }

  #emit(event: RunStreamEvent): void {
    for (const listener of [...this.#listeners]) listener(event);
  }
}
