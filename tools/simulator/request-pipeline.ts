import type { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RecordedRequest, SimulatorEvents } from "./control.js";
import type { SlidingWindowLimiter } from "./rate-limit.js";
import { matchRoute, type Route, type RouteDeps, type RouteKind } from "./routes.js";
import { SseWriter } from "./sse-writer.js";
import {
  bearerToken,
  errorBody,
  HttpError,
  jsonObject,
  queryRecord,
  readBody,
  recordedBody,
  sendJson,
} from "./wire.js";

/**
 * The steps every request goes through, in this order: read the body → injected latency
 * → injected failure → bearer auth (401) → route (404/405) → rate limit (429) → JSON body
 * (400) → handler. Requests refused by auth or by the limiter are not counted against
 * the limit; everything past the limiter is (run starts only once the run exists).
 */

export interface PipelineDeps extends RouteDeps {
  routes: readonly Route[];
  limits: Record<RouteKind, SlidingWindowLimiter>;
  /** When set, the only bearer token accepted. */
  requiredToken: string | undefined;
  requests: RecordedRequest[];
  events: EventEmitter<SimulatorEvents>;
  /** Open streams, so that closing the simulator can end them. */
  writers: Set<SseWriter>;
  /** Waits `ms` milliseconds (injected latency); never resolves once the simulator closes. */
  delay(ms: number): Promise<void>;
}

export async function handleRequest(
  deps: PipelineDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const method = (req.method ?? "GET").toUpperCase();
  const token = bearerToken(req.headers.authorization);
  const record: RecordedRequest = {
    method,
    path: url.pathname,
    query: queryRecord(url.searchParams),
    body: undefined,
    token,
    status: 0,
    at: deps.now(),
  };
  let answered = false;
  const answer = (status: number) => {
    if (answered) return;
    answered = true;
    record.status = status;
    deps.requests.push(record);
    deps.events.emit("request", record);
  };
  res.on("close", () => answer(0));

  try {
    const raw = await readBody(req);
    record.body = recordedBody(raw);
    if (deps.faults.latencyMs > 0) await deps.delay(deps.faults.latencyMs);
    const failure = deps.faults.takeFailure(method, record.path);
    if (failure === "reset") {
      answer(0);
      res.destroy();
      return;
    }
    if (typeof failure === "number") throw new HttpError(failure, "simulated failure");
    // The request is carried out below; only its answer is replaced by a reset.
    const resetAfter = failure === "reset-after";
    const refused =
      token === undefined ||
      (deps.requiredToken !== undefined && token !== deps.requiredToken) ||
      deps.faults.revokedTokens.has(token) ||
      deps.faults.refuseEveryToken;
    if (refused) {
      throw new HttpError(401, "a valid bearer token is required", {
        "www-authenticate": 'Bearer realm="assistant"',
      });
    }
    const match = matchRoute(deps.routes, method, record.path);
    if (!match.found) {
      if (match.status === 405) {
        throw new HttpError(405, `method ${method} not allowed here`, {
          allow: match.allow.join(", "),
        });
      }
      throw new HttpError(404, `no route for ${method} ${record.path}`);
    }
    admit(deps, match.route.kind, token as string);
    const body = match.route.body === "json" ? jsonObject(raw) : {};
    const reply = match.route.handle({
      token: token as string,
      id: match.id,
      query: record.query,
      body,
      countRunStart: () => deps.limits.run_start.record(token),
      openStream: () => {
        const writer = new SseWriter(res, {
          keepAliveMs: deps.streams.keepAliveMs,
          dropAfterEvents: deps.faults.dropStreamsAfter,
        });
        answer(200);
        deps.writers.add(writer);
        writer.onClose(() => deps.writers.delete(writer));
        return writer;
      },
    });
    if (reply !== undefined) {
      if (resetAfter) {
        answer(0);
        res.destroy();
        return;
      }
      sendJson(res, reply.status, reply.body);
      answer(reply.status);
    }
  } catch (error) {
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    const failure =
      error instanceof HttpError ? error : new HttpError(500, `simulator error: ${String(error)}`);
    sendJson(res, failure.status, errorBody(failure.status, failure.message), failure.headers);
    answer(failure.status);
  }
}

/** The rate limits of interface §8; throws 429 with Retry-After when over. */
function admit(deps: PipelineDeps, kind: RouteKind, token: string): void {
  const limited = (seconds: number, what: string) =>
    new HttpError(429, `rate limit exceeded: ${what}; retry after ${seconds} s`, {
      "retry-after": String(seconds),
    });
  if (kind === "run_start") {
    const forced = deps.faults.takeRunStartRateLimit();
    if (forced !== undefined) throw limited(forced, "run starts");
  }
  const verdict = deps.limits[kind].check(token);
  if (!verdict.allowed) {
    throw limited(verdict.retryAfterSeconds, kind === "run_start" ? "run starts" : "requests");
  }
  if (kind === "request") deps.limits.request.record(token);
}
