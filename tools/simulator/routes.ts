import type { Faults } from "./faults.js";
import type { SseDialect } from "./sse.js";
import type { SseWriter } from "./sse-writer.js";
import type { SimulatorState } from "./state.js";
import { HttpError } from "./wire.js";

/**
 * What a route is and how a request finds one. Handlers receive an authenticated,
 * rate-checked request; they answer JSON by returning a reply, or take over the response
 * through `openStream()` and return undefined.
 */

/** Run starts and everything else are limited separately (interface §8). */
export type RouteKind = "run_start" | "request";

export interface RouteDeps {
  state: SimulatorState;
  faults: Faults;
  /** Mutable: tests switch the dialect at run time. */
  streams: { dialect: SseDialect; keepAliveMs: number };
  /** Clock in epoch milliseconds. */
  now: () => number;
}

export interface RouteContext {
  token: string;
  /** The `:id` path parameter ("" on routes without one). */
  id: string;
  query: Readonly<Record<string, string>>;
  /** The JSON object body on routes that take one; empty otherwise. */
  body: Readonly<Record<string, unknown>>;
  /** Counts one run start against the caller's limit; call it once the run exists. */
  countRunStart(): void;
  /** Answers 200 `text/event-stream`; the handler then owns the response. */
  openStream(): SseWriter;
}

export interface JsonReply {
  status: number;
  body: unknown;
}

export interface Route {
  method: "GET" | "POST";
  /** Path with an optional `:id` segment, e.g. `/v1/run/:id`. */
  pattern: string;
  kind: RouteKind;
  /** "json": the body must be a JSON object; "ignore": any or no body. */
  body: "json" | "ignore";
  handle(context: RouteContext): JsonReply | undefined;
}

/**
 * A thread or run the caller may see, else 404: another caller's resources answer as if they
 * did not exist. Takes the lookup's result so that one helper serves threads and runs.
 */
export function owned<T>(kind: "thread" | "run", id: string, resource: T | undefined): T {
  if (resource === undefined) throw new HttpError(404, `${kind} ${id} not found`);
  return resource;
}

export type RouteMatch =
  | { found: true; route: Route; id: string }
  | { found: false; status: 404 }
  | { found: false; status: 405; allow: string[] };

function matchPattern(pattern: string, path: string): { id: string } | undefined {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return undefined;
  let id = "";
  for (const [i, segment] of want.entries()) {
    const actual = got[i] ?? "";
    if (segment === ":id") {
      if (actual === "") return undefined;
      try {
        id = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
    } else if (segment !== actual) {
      return undefined;
    }
  }
  return { id };
}

/** The route for `method path`: 404 when no pattern fits, 405 when only the method is wrong. */
export function matchRoute(routes: readonly Route[], method: string, path: string): RouteMatch {
  const allow: string[] = [];
  for (const route of routes) {
    const match = matchPattern(route.pattern, path);
    if (match === undefined) continue;
    if (route.method === method) return { found: true, route, id: match.id };
    allow.push(route.method);
  }
  return allow.length === 0 ? { found: false, status: 404 } : { found: false, status: 405, allow };
}
