import { EventEmitter } from "node:events";
import type { ScriptedAnswer } from "./answers.js";
import type { FailRequestsRule } from "./faults.js";
import type { SimulatorMessage, SimulatorRun, SimulatorThread } from "./resources.js";
import type { RouteDeps } from "./routes.js";
import { isSseDialect, type SseDialect } from "./sse.js";
import type { StateEvents } from "./state.js";

/** One request as the simulator saw and answered it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  /** First value of each query parameter. */
  query: Record<string, string>;
  /** Parsed JSON when the body was JSON, the raw text otherwise, undefined when empty. */
  body: unknown;
  token: string | undefined;
  /** The status answered; 0 when the connection was reset or closed without an answer. */
  status: number;
  /** When it arrived, by the simulator's clock (epoch milliseconds). */
  at: number;
}

export type SimulatorEvents = StateEvents & { request: [RecordedRequest] };

/** What tests use to script answers, inject faults and look at the simulator's state. */
export interface SimulatorControl {
  /** Every answered request, in answer order. */
  readonly requests: RecordedRequest[];
  /**
   * "request", "run-started", "run-status", "run-text" (each piece of an answer as it is
   * written, stamped), "run-ended" (runs are snapshots).
   */
  readonly events: EventEmitter<SimulatorEvents>;
  /** The next run started (FIFO over later runs) answers with this script. */
  enqueueAnswer(answer: ScriptedAnswer): void;
  /** The script for every run without a queued one; undefined restores the generator. */
  setDefaultAnswer(answer: ScriptedAnswer | undefined): void;
  setDialect(dialect: SseDialect): void;
  /** Delay before every response, in milliseconds. */
  setLatency(ms: number): void;
  failRequests(rule: FailRequestsRule): void;
  /** The next run start answers 429 with this Retry-After (seconds). */
  rateLimitNextRunStart(retryAfterSeconds: number): void;
  /** Streams opened from now on drop the connection after k events; undefined: never. */
  dropStreamsAfter(k: number | undefined): void;
  /** From now on the service refuses this bearer token (401), as for a revoked access token. */
  revokeToken(token: string): void;
  /**
   * While on, the service refuses every bearer token (401, as for a revoked one): an
   * authentication incident on the service's side, for everyone at once.
   */
  refuseEveryToken(on: boolean): void;
  /**
   * A thread owned by `token` (the person it stands for), as if they had created it with
   * POST /v1/thread; for tests that need a person with many threads.
   */
  createThread(token: string, assistantId: string, title?: string): SimulatorThread;
  /** New runs never reach an end status unless stopped. */
  hangRuns(on: boolean): void;
  resetFaults(): void;
  runs(): SimulatorRun[];
  getRun(id: string): SimulatorRun | undefined;
  threads(): SimulatorThread[];
  messages(threadId: string): SimulatorMessage[];
  /** `messages` counts user messages only. */
  counts(): { threads: number; messages: number; runs: number };
  /** Resolves once the run has an end status; rejects for an unknown run or on close. */
  waitForRunEnd(id: string): Promise<SimulatorRun>;
}

export function createControl(deps: RouteDeps, requests: RecordedRequest[]): SimulatorControl {
  const { state, faults } = deps;
  const events = new EventEmitter<SimulatorEvents>();
  events.setMaxListeners(0);
  state.events.on("run-started", (run) => events.emit("run-started", run));
  state.events.on("run-status", (run) => events.emit("run-status", run));
  state.events.on("run-text", (piece) => events.emit("run-text", piece));
  state.events.on("run-ended", (run) => events.emit("run-ended", run));
  return {
    requests,
    events,
    enqueueAnswer: (answer) => state.enqueueAnswer(answer),
    setDefaultAnswer: (answer) => state.setDefaultAnswer(answer),
    setDialect: (dialect) => {
      if (!isSseDialect(dialect)) throw new RangeError(`unknown dialect ${String(dialect)}`);
      deps.streams.dialect = dialect;
    },
    setLatency: (ms) => {
      faults.latencyMs = Math.max(0, ms);
    },
    failRequests: (rule) => faults.failRequests(rule),
    rateLimitNextRunStart: (seconds) => faults.rateLimitNextRunStart(seconds),
    dropStreamsAfter: (k) => {
      faults.dropStreamsAfter = k;
    },
    hangRuns: (on) => {
      faults.hangRuns = on;
    },
    resetFaults: () => faults.reset(),
    revokeToken: (token) => {
      faults.revokedTokens.add(token);
    },
    refuseEveryToken: (on) => {
      faults.refuseEveryToken = on;
    },
    createThread: (token, assistantId, title) =>
      structuredClone(state.createThread(token, assistantId, title)),
    runs: () => state.runs().map((lifecycle) => structuredClone(lifecycle.run)),
    getRun: (id) => {
      const lifecycle = state.run(id);
      return lifecycle === undefined ? undefined : structuredClone(lifecycle.run);
    },
    threads: () => structuredClone(state.threads()),
    messages: (threadId) => structuredClone(state.messages(threadId)),
    counts: () => {
      const threads = state.threads();
      const messages = threads
        .flatMap((thread) => state.messages(thread.id))
        .filter((message) => message.role === "user").length;
      return { threads: threads.length, messages, runs: state.runs().length };
    },
    waitForRunEnd: (id) => state.waitForRunEnd(id),
  };
}
