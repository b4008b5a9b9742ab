import type { IncomingMessage, ServerResponse } from "node:http";
import { type Clock, settleWithin, systemClock } from "../time.js";
import { bearerMatches } from "./bearer.js";
import type { Metrics } from "./metrics.js";

export interface Readiness {
  /** Name → check; each resolves true when that dependency is fine. */
  checks: Record<string, () => Promise<boolean> | boolean>;
  /**
   * A check that has not answered after this long counts as failed, ms; default 1_500, so that
   * `/readyz` answers within 2 s whatever its checks wait for (a stalled database).
   */
  timeoutMs?: number;
  /** Times the checks; default the system clock. */
  clock?: Clock;
}

export interface OpsAccess {
  /**
   * When set, `/metrics` answers only a request with `Authorization: Bearer <token>`;
   * default unset: open to whoever reaches the port.
   */
  metricsToken?: string | undefined;
}

export interface OpsRoute {
  path: string;
  method: "GET";
  handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
}

/** One check's verdict: false when it threw, said no, or did not answer in time. */
async function verdict(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  clock: Clock,
): Promise<boolean> {
  const settled = await settleWithin(Promise.resolve().then(check), timeoutMs, clock);
  return settled.state === "fulfilled" && settled.value === true;
}

/**
 * `/healthz` (the process lives), `/readyz` (it can do its work: 200 or 503 with each
 * check's verdict as JSON), `/metrics` (Prometheus text format, behind a bearer token when
 * one is configured). None of them costs a service request of its own: a check that asks the
 * service is given here already cached (verdict-cache.ts).
 */
export function opsRoutes(
  metrics: Metrics,
  readiness: Readiness,
  access: OpsAccess = {},
): OpsRoute[] {
  const { timeoutMs = 1_500, clock = systemClock } = readiness;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };
  return [
    { path: "/healthz", method: "GET", handler: (_req, res) => json(res, 200, { status: "ok" }) },
    {
      path: "/readyz",
      method: "GET",
      handler: async (_req, res) => {
        const entries = await Promise.all(
          Object.entries(readiness.checks).map(
            async ([name, check]) => [name, await verdict(check, timeoutMs, clock)] as const,
          ),
        );
        const checks = Object.fromEntries(entries);
        const ready = entries.every(([, ok]) => ok);
        json(res, ready ? 200 : 503, { status: ready ? "ready" : "not ready", checks });
      },
    },
    {
      path: "/metrics",
      method: "GET",
      handler: async (req, res) => {
        const { metricsToken } = access;
        if (metricsToken !== undefined && !bearerMatches(req.headers.authorization, metricsToken)) {
          res.writeHead(401, {
            "content-type": "text/plain",
            "www-authenticate": 'Bearer realm="metrics"',
          });
          res.end("unauthorized\n");
          return;
        }
        const body = await metrics.registry.metrics();
        res.writeHead(200, { "content-type": metrics.registry.contentType });
        res.end(body);
      },
    },
  ];
}
