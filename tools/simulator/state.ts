import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { generateAnswer, planAnswer, type ScriptedAnswer } from "./answers.js";
import type {
  SimulatorMessage,
  SimulatorRun,
  SimulatorRunSettings,
  SimulatorThread,
} from "./resources.js";
import { RunLifecycle } from "./run-lifecycle.js";

/**
 * The simulator's store: threads, messages and runs, each owned by the bearer token that
 * created it (another token sees a 404). Runs are driven by RunLifecycle; when one
 * completes, its answer is appended to the thread as an assistant message.
 */

export interface StateOptions {
  /** Clock in epoch milliseconds, for `createdAt`. */
  now: () => number;
  /** Time a run spends queued, in milliseconds. */
  queueDelayMs: number;
  /** Generated answer length in characters; undefined varies it per question. */
  answerLength: number | undefined;
  /** Chunks written per second when the script does not say. */
  tokensPerSecond: number;
}

/**
 * One piece of a run's answer as it is written to the run's streams, stamped then: what an
 * observer outside the bot measures "the service's first text" (and every later one) from.
 */
export interface RunTextPiece {
  runId: string;
  /** The increment written. */
  text: string;
  /** Characters written so far, this piece included. */
  written: number;
  /** When it was written, by the simulator's clock (epoch milliseconds). */
  at: number;
}

export interface StateEvents {
  "run-started": [SimulatorRun];
  "run-status": [SimulatorRun];
  "run-text": [RunTextPiece];
  "run-ended": [SimulatorRun];
}

export interface StartRunRequest {
  thread: SimulatorThread;
  trigger: SimulatorMessage;
  settings: SimulatorRunSettings;
  /** New runs hang (fault control). */
  hang: boolean;
  /** Reported as `modelUsed` (chat completions' `model`). */
  modelUsed?: string;
}

interface OwnedThread {
  thread: SimulatorThread;
  token: string;
  messages: SimulatorMessage[];
  runCount: number;
}

export class SimulatorState {
  readonly events = new EventEmitter<StateEvents>();
  /** Fires once on close, so that pending waiters reject instead of hanging a test. */
  readonly #closing = new EventEmitter<{ close: [] }>();
  readonly #options: StateOptions;
  readonly #threads = new Map<string, OwnedThread>();
  readonly #runs = new Map<string, RunLifecycle>();
  readonly #scripts: ScriptedAnswer[] = [];
  #defaultScript: ScriptedAnswer | undefined;
  #closed = false;

  constructor(options: StateOptions) {
    this.#options = options;
    // Any number of tests may wait for runs at once; that is not a leak.
    this.events.setMaxListeners(0);
    this.#closing.setMaxListeners(0);
  }

  enqueueAnswer(script: ScriptedAnswer): void {
    this.#scripts.push(script);
  }

  setDefaultAnswer(script: ScriptedAnswer | undefined): void {
    this.#defaultScript = script;
  }

  createThread(token: string, assistantId: string, title: string | undefined): SimulatorThread {
    const thread: SimulatorThread = {
      id: randomUUID(),
      assistantId,
      ...(title === undefined ? {} : { title }),
      createdAt: this.#stamp(),
    };
    this.#threads.set(thread.id, { thread, token, messages: [], runCount: 0 });
    return thread;
  }

  /** The thread if it exists and belongs to `token` (undefined token: any owner). */
  thread(id: string, token?: string): SimulatorThread | undefined {
    const owned = this.#threads.get(id);
    return owned && (token === undefined || owned.token === token) ? owned.thread : undefined;
  }

  /** Threads of `token` (every thread when undefined), oldest first. */
  threads(token?: string): SimulatorThread[] {
    return [...this.#threads.values()]
      .filter((owned) => token === undefined || owned.token === token)
      .map((owned) => owned.thread);
  }

  addMessage(threadId: string, content: string, role: "user" | "assistant" = "user") {
    const owned = this.#owned(threadId);
    const message: SimulatorMessage = {
      id: randomUUID(),
      threadId,
      role,
      content,
      createdAt: this.#stamp(),
    };
    owned.messages.push(message);
    return message;
  }

  /** Messages of a thread, oldest first (empty for an unknown thread). */
  messages(threadId: string): SimulatorMessage[] {
    return this.#threads.get(threadId)?.messages ?? [];
  }

  startRun(request: StartRunRequest): RunLifecycle {
    const owned = this.#owned(request.thread.id);
    const ordinal = owned.runCount;
    owned.runCount += 1;
    const script = this.#scripts.shift() ?? this.#defaultScript;
    const plan = planAnswer(
      script,
      () => generateAnswer(request.trigger.content, ordinal, this.#options.answerLength),
      { tokensPerSecond: this.#options.tokensPerSecond, hang: request.hang },
    );
    if (request.modelUsed !== undefined && plan.modelUsed === undefined) {
      plan.modelUsed = request.modelUsed;
    }
    const run: SimulatorRun = {
      id: randomUUID(),
      threadId: owned.thread.id,
      assistantId: owned.thread.assistantId,
      status: "queued",
      output: null,
      modelUsed: null,
      error: null,
      triggerMessageId: request.trigger.id,
      settings: request.settings,
      createdAt: this.#stamp(),
    };
    const lifecycle = new RunLifecycle(run, owned.token, plan, {
      queueDelayMs: this.#options.queueDelayMs,
      onEnd: (ended) => this.#finish(ended),
    });
    lifecycle.subscribe((event) => {
      if (event.type === "status") this.events.emit("run-status", structuredClone(event.run));
      if (event.type === "delta") {
        const piece = { runId: run.id, text: event.text, written: event.written.length };
        this.events.emit("run-text", { ...piece, at: this.#options.now() });
      }
    });
    this.#runs.set(run.id, lifecycle);
    if (!this.#closed) lifecycle.start();
    this.events.emit("run-started", structuredClone(run));
    return lifecycle;
  }

  /** The run if it exists and its thread belongs to `token` (undefined token: any). */
  run(id: string, token?: string): RunLifecycle | undefined {
    const lifecycle = this.#runs.get(id);
    return lifecycle && (token === undefined || lifecycle.token === token) ? lifecycle : undefined;
  }

  runs(): RunLifecycle[] {
    return [...this.#runs.values()];
  }

  /** Resolves with the run once it has an end status (at once when it already has). */
  waitForRunEnd(id: string): Promise<SimulatorRun> {
    const lifecycle = this.#runs.get(id);
    if (lifecycle === undefined) return Promise.reject(new Error(`unknown run ${id}`));
    if (lifecycle.ended) return Promise.resolve(structuredClone(lifecycle.run));
    if (this.#closed) return Promise.reject(new Error("simulator closed"));
    return new Promise((resolve, reject) => {
      const onEnd = (run: SimulatorRun) => {
        if (run.id !== id) return;
        cleanup();
        resolve(run);
      };
      const onClose = () => {
        cleanup();
        reject(new Error(`simulator closed before run ${id} ended`));
      };
      const cleanup = () => {
        this.events.off("run-ended", onEnd);
        this.#closing.off("close", onClose);
      };
      this.events.on("run-ended", onEnd);
      this.#closing.once("close", onClose);
    });
  }

  /** Stops every timer; runs keep their current status. Pending waiters are rejected. */
  close(): void {
    this.#closed = true;
    for (const lifecycle of this.#runs.values()) lifecycle.dispose();
    this.#closing.emit("close");
  }

  #finish(lifecycle: RunLifecycle): void {
    const run = lifecycle.run;
    if (run.status === "completed") {
      const message = this.addMessage(run.threadId, lifecycle.written, "assistant");
      message.runId = run.id;
    }
    this.events.emit("run-ended", structuredClone(run));
  }

  #owned(threadId: string): OwnedThread {
    const owned = this.#threads.get(threadId);
    if (owned === undefined) throw new Error(`unknown thread ${threadId}`);
    return owned;
  }

  #stamp(): string {
    return new Date(this.#options.now()).toISOString();
  }
}
