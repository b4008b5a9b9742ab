import type { IncomingMessage, ServerResponse } from "node:http";
import type { Metrics } from "./metrics.js";

export interface Readiness {
  /** Name → check; each resolves true when that dependency is fine. */
  checks: Record<string, () => Promise<boolean> | boolean>;
}

export interface OpsRoute {
  path: string;
  method: "GET";
  handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
}

/** `/healthz` (the process lives), `/readyz` (it can do its work), `/metrics` (Prometheus). */
export function opsRoutes(metrics: Metrics, readiness: Readiness): OpsRoute[] {
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  return [
    { path: "/healthz", method: "GET", handler: (_req, res) => json(res, 200, { status: "ok" }) },
    {
      path: "/readyz",
      method: "GET",
      handler: async (_req, res) => {
        const results: Record<string, boolean> = {};
        await Promise.all(
          Object.entries(readiness.checks).map(async ([name, check]) => {
            try {
              results[name] = await check();
            } catch {
              results[name] = false;
            }
          }),
        );
        const ready = Object.values(results).every(Boolean);
        json(res, ready ? 200 : 503, { status: ready ? "ready" : "not ready", checks: results });
      },
    },
    {
      path: "/metrics",
      method: "GET",
      handler: async (_req, res) => {
        const body = await metrics.registry.metrics();
        res.writeHead(200, { "content-type": metrics.registry.contentType });
        res.end(body);
      },
    },
  ];
}
