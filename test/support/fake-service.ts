import type {
  AssistantService,
  Caller,
  CallOptions,
  ReplyStep,
  Run,
  RunProgress,
  RunStartBody,
} from "../../src/bridge/ports.js";

/** A call the fake service received, in order. */
export type ServiceCall =
  | { call: "openThread"; assistantId: string }
  | { call: "postMessage"; threadId: string; content: string }
  | { call: "startRun"; threadId: string; body: RunStartBody }
  | { call: "getRun" | "streamRun" | "stopRun"; runId: string }
  | { call: "listMessages"; threadId: string };

type Gate = { call: ServiceCall["call"]; open: Promise<void>; entered: () => void };

/** An error as the service client makes them: the bridge reads its `kind`. */
export class FakeServiceError extends Error {
  constructor(
    readonly kind: "server" | "connection" | "timeout" | "bad_request" | "rate_limited",
    /** A connection failure: whether the request may have reached the service (the client's `sent`). */
    readonly sent = true,
  ) {
    super(`fake ${kind}`);
    this.name = "FakeServiceError";
  }
}

/**
 * The assistant service, in memory, for the core's tests: records every call, answers each
 * run with `answer` (streamed in two pieces), and lets a test hold a call at its start
 * (`hold`) or make the next calls of a kind fail (`failNext`).
 */
export class FakeService implements AssistantService {
  readonly calls: ServiceCall[] = [];
  /** The calls told to come soon (`expect`), in order, with whom they are for. */
  readonly expected: { calls: { request?: number; run_start?: number }; caller: Caller }[] = [];
  readonly messages: { id: string; content: string; role: string }[] = [];
  answer = "The answer.";
  /** The status a run ends with, unless stopped. */
  endStatus: Run["status"] = "completed";
  /** A run that never ends until stopped. */
  hang = false;
  /** Step updates the stream tells, each before the first half of the answer. */
  steps: ReplyStep[] = [];
  /** Run starts say they wait behind this many (the budget's onQueued), when set. */
  queuedAhead: number | undefined;
  /** With `queuedAhead`, run starts wait for this before they go on (their turn in the budget). */
  queuedUntil: Promise<void> | undefined;
  private readonly runs = new Map<string, Run>();
  private readonly gates: Gate[] = [];
  private readonly failures: { call: ServiceCall["call"]; error: Error }[] = [];
  private readonly stopped = new Set<string>();
  private readonly onStop = new Map<string, () => void>();
  private ids = 0;

  /** The next `call` waits until the returned function is called; `entered` resolves when it is reached. */
  hold(call: ServiceCall["call"]): { entered: Promise<void>; release: () => void } {
    let release = () => {};
    let entered = () => {};
    const reached = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const open = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.gates.push({ call, open, entered });
    return { entered: reached, release };
  }

  failNext(call: ServiceCall["call"], error: Error, times = 1): void {
    for (let i = 0; i < times; i++) this.failures.push({ call, error });
  }

  count(call: ServiceCall["call"]): number {
    return this.calls.filter((c) => c.call === call).length;
  }

  async openThread(body: { assistantId: string }): Promise<{ id: string }> {
    await this.enter({ call: "openThread", assistantId: body.assistantId });
    return { id: `thread-${++this.ids}` };
  }

  async postMessage(
    threadId: string,
    body: { content: string },
    opts?: CallOptions,
  ): Promise<{ id: string }> {
    // As the real client: once the call has its connection, before a byte of it is written.
    await opts?.onSend?.({ identity: "shared" });
    await this.enter({ call: "postMessage", threadId, content: body.content });
    const message = { id: `msg-${++this.ids}`, content: body.content, role: "user" };
    this.messages.push(message);
    return { id: message.id };
  }

  async startRun(
    threadId: string,
    body: RunStartBody | (() => RunStartBody | Promise<RunStartBody>),
    opts?: CallOptions,
  ): Promise<Run> {
    if (this.queuedAhead !== undefined) {
      opts?.onQueued?.({ position: this.queuedAhead, expectedWaitMs: 1_000 });
      await this.queuedUntil;
    }
    if (opts?.signal?.aborted) throw opts.signal.reason;
    const sent = typeof body === "function" ? await body() : body;
    await opts?.onSend?.({ identity: "shared" });
    await this.enter({ call: "startRun", threadId, body: sent }, opts?.signal);
    const run: Run = { id: `run-${++this.ids}`, status: "in_progress" };
    this.runs.set(run.id, run);
    return run;
  }

  expect(calls: { request?: number; run_start?: number }, caller: Caller): void {
    this.expected.push({ calls, caller });
  }

  async getRun(runId: string): Promise<Run> {
    await this.enter({ call: "getRun", runId });
    return this.runOf(runId);
  }

  async *streamRun(runId: string, opts?: CallOptions): AsyncGenerator<RunProgress> {
    await this.enter({ call: "streamRun", runId });
    const half = Math.ceil(this.answer.length / 2);
    for (const step of this.steps) yield { type: "step", step };
    yield { type: "text", text: this.answer.slice(0, half) };
    if (this.hang && !this.stopped.has(runId)) {
      // A hanging run says nothing more until it is stopped or its reader gives up.
      await new Promise<void>((resolve, reject) => {
        this.onStop.set(runId, resolve);
        if (opts?.signal?.aborted) reject(opts.signal.reason);
        opts?.signal?.addEventListener("abort", () => reject(opts.signal?.reason), { once: true });
      });
    }
    if (!this.stopped.has(runId)) yield { type: "text", text: this.answer };
    yield { type: "status", status: this.runOf(runId).status };
    yield { type: "end", reason: "done" };
  }

  async stopRun(runId: string): Promise<Run | undefined> {
    await this.enter({ call: "stopRun", runId });
    this.stopped.add(runId);
    this.onStop.get(runId)?.();
    return this.runOf(runId);
  }

  async listMessages(threadId: string) {
    await this.enter({ call: "listMessages", threadId });
    return [...this.messages];
  }

  private runOf(runId: string): Run {
    if (this.stopped.has(runId)) {
      return {
        id: runId,
        status: "canceled",
        output: [{ text: this.answer.slice(0, Math.ceil(this.answer.length / 2)) }],
      };
    }
    if (this.hang) return { id: runId, status: "in_progress" };
    return {
      id: runId,
      status: this.endStatus,
      output: [{ text: this.answer }],
      modelUsed: "model-a",
    };
  }

  private async enter(call: ServiceCall, signal?: AbortSignal): Promise<void> {
    this.calls.push(call);
    const gate = this.gates.findIndex((g) => g.call === call.call);
    if (gate >= 0) {
      const [held] = this.gates.splice(gate, 1);
      held?.entered();
      await held?.open;
    }
    if (signal?.aborted) throw signal.reason;
    const failure = this.failures.findIndex((f) => f.call === call.call);
    if (failure >= 0) {
      const [failed] = this.failures.splice(failure, 1);
      throw failed?.error;
    }
  }
}
