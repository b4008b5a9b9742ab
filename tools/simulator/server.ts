/**
 * A stand-in for the Assistant Conversation Service (shared/spec/assistant-service-
 * interface.md), on node:http, listening on 127.0.0.1 only. Where the interface says
 * "not shown", the simulator makes these wire choices (docs/simulator.md has the detail):
 *
 * - Auth: `Authorization: Bearer <t>`; any non-empty token, or only `options.token`.
 *   Missing, empty or wrong → 401. Threads (and their messages and runs) belong to the
 *   token that created them; another token gets 404.
 * - Errors: `{"error":{"type":"invalid_request|authentication|not_found|rate_limited|
 *   server_error","message":"…"}}`. Unknown route 404, wrong method 405 (with `Allow`),
 *   unknown or malformed id 404, body not a JSON object or a field breaking a rule 400.
 * - Resources: UUID v4 ids; `createdAt` ISO 8601. A thread `{id, assistantId, title?,
 *   createdAt}`; a message `{id, threadId, role, content, createdAt}`; a run `{id, threadId,
 *   assistantId, status, output, modelUsed, error, triggerMessageId, settings, createdAt}`.
 *   Run settings are top-level fields of the run-start body.
 * - Run lifecycle: queued → (queueDelayMs) in_progress → text written in ~4-character
 *   chunks at the token rate → completed (output `[{type:"text",text}]`, and an assistant
 *   message appended to the thread) | failed (error text, output null) | canceled by
 *   `POST /v1/runs/{id}/stop` (output holds the partial text, or null). `output` is null
 *   while the run works; `modelUsed` is set once it works.
 * - Lists: `?limit=<1..>&after=<id>` (default 100, clamped to 400) →
 *   `{object:"list", data (oldest first), first_id, last_id, has_more}`.
 *   `GET /v1/threads?assistantId=` lists the caller's own threads only.
 * - Rate limits per token, sliding window: 20 run starts (run creation and chat
 *   completions) and 600 other requests per minute → 429, `Retry-After: <s ≥ 1>`.
 * - Run stream: `text/event-stream`, replays what was written, then live, then closes;
 *   `: keep-alive` comments. Default dialect "events" (`event: status|delta|done`); others
 *   "openai", "snapshot", "run", "plain" by option, control or `?dialect=`.
 * - Chat completions: streamed as OpenAI `chat.completion.chunk` events (role first,
 *   finish_reason stop|error|canceled with usage, completion_tokens 0), then `data: [DONE]`;
 *   not streamed, `finish_reason:"queued"` with `thread_id`, `message_id`, `run_id`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createControl, type RecordedRequest, type SimulatorControl } from "./control.js";
import { Faults } from "./faults.js";
import { resolveOptions, type SimulatorOptions } from "./options.js";
import { SlidingWindowLimiter } from "./rate-limit.js";
import { handleRequest, type PipelineDeps } from "./request-pipeline.js";
import type { RouteDeps } from "./routes.js";
import { chatRoutes } from "./routes-chat.js";
import { runRoutes } from "./routes-runs.js";
import { threadRoutes } from "./routes-threads.js";
import type { SseWriter } from "./sse-writer.js";
import { SimulatorState } from "./state.js";

export type { ScriptedAnswer } from "./answers.js";
export type { RecordedRequest, SimulatorControl, SimulatorEvents } from "./control.js";
export type { FailRequestsRule } from "./faults.js";
export type { SimulatorOptions } from "./options.js";
export type { SimulatorMessage, SimulatorRun, SimulatorThread } from "./resources.js";
export { SSE_DIALECTS, type SseDialect } from "./sse.js";
export type { RunTextPiece } from "./state.js";

export interface RunningSimulator {
  /** `http://127.0.0.1:<port>`, no trailing slash: the service's {base_url}. */
  url: string;
  port: number;
  control: SimulatorControl;
  /** Ends open streams, timers and connections. Safe to call twice. */
  close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const resolved = resolveOptions(options);
  const state = new SimulatorState({
    now: resolved.now,
    queueDelayMs: resolved.queueDelayMs,
    answerLength: resolved.answerLength,
    tokensPerSecond: resolved.tokensPerSecond,
  });
  const routeDeps: RouteDeps = {
    state,
    faults: new Faults(),
    streams: { dialect: resolved.dialect, keepAliveMs: resolved.keepAliveMs },
    now: resolved.now,
  };
  const limiter = (limit: number) =>
    new SlidingWindowLimiter({ limit, windowMs: resolved.windowMs, now: resolved.now });
  const requests: RecordedRequest[] = [];
  const control = createControl(routeDeps, requests);
  const delays = new Set<NodeJS.Timeout>();
  const writers = new Set<SseWriter>();
  const deps: PipelineDeps = {
    ...routeDeps,
    routes: [...threadRoutes(routeDeps), ...runRoutes(routeDeps), ...chatRoutes(routeDeps)],
    limits: {
      run_start: limiter(resolved.runStartsPerWindow),
      request: limiter(resolved.requestsPerWindow),
    },
    requiredToken: resolved.token,
    requests,
    events: control.events,
    writers,
    delay: (ms) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          delays.delete(timer);
          resolve();
        }, ms);
        delays.add(timer);
      }),
  };

  const server = createServer((req, res) => {
    // handleRequest answers its own errors; this only guards against a broken socket.
    handleRequest(deps, req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(resolved.port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      state.close();
      for (const timer of delays) clearTimeout(timer);
      for (const writer of writers) writer.destroy();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };

  return { url: `http://127.0.0.1:${port}`, port, control, close };
}
