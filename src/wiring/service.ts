import type { Config } from "../config.js";
import type { Metrics } from "../observability/metrics.js";
import { serviceProbe } from "../observability/service-probe.js";
import { cachedVerdict } from "../observability/verdict-cache.js";
import { ServiceBudget } from "../service/budget.js";
import { ServiceClient } from "../service/client.js";
import type { Clock } from "../time.js";

/** The service side: one budget, the bridge's client and the readiness probe's. */
export function wireService(config: Config, clock: Clock, metrics: Metrics) {
  const { baseUrl, token, assistantId } = config.service;
  const budget = new ServiceBudget({
    runStartsPerMinute: config.service.runStartsPerMinute,
    requestsPerMinute: config.service.requestsPerMinute,
    clock,
  });
  const service = new ServiceClient({
    baseUrl,
    token,
    budget,
    clock,
    // The bridge's outage loop (bridge/outage.ts) is its one retry layer: no retries in here.
    maxRetries: 0,
    onRateLimited: () => metrics.serviceRateLimited.inc(),
  });
  // Readiness asks the service once, without retries, through the same budget, and at most
  // once per 10 s however often /readyz is called (the contract's bound for the ops routes).
  const probeClient = new ServiceClient({
    baseUrl,
    token,
    budget,
    clock,
    maxRetries: 0,
    connectTimeoutMs: 2_000,
    headersTimeoutMs: 2_000,
  });
  const probe = cachedVerdict(
    serviceProbe({
      clock,
      request: ({ signal, onQueued }) =>
        probeClient.listThreads({ assistantId }, { maxPages: 1, signal, onQueued }),
    }),
    { maxAgeMs: 10_000, clock },
  );
  return {
    budget,
    service,
    probe,
    async close() {
      await service.close();
      await probeClient.close();
    },
  };
}
