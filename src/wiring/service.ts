import { ServiceBudget } from "../budgets/service/budget.js";
import type { SlotWindows } from "../budgets/service/slot-window.js";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import { serviceProbe } from "../observability/service-probe.js";
import { cachedVerdict } from "../observability/verdict-cache.js";
import { ServiceClient } from "../service/client.js";
import type { CredentialSource } from "../service/credential.js";
import type { Clock } from "../time.js";

/** Who the bridge's requests are sent as, and where each request is told (people.ts). */
export interface ServiceIdentity {
  credentials: CredentialSource;
  logger: Logger;
}

/**
 * The service side: one budget (a lane per token), the bridge's client and the readiness
 * probe's. The bridge's client sends each request as its identity says and logs it, naming
 * the identity and never the token; the probe always asks with the shared token.
 *
 * `windows`: where each token's budget is kept; default this process's memory. Replicas on
 * one PostgreSQL database pass `sharedBudgets(db).slotWindows`.
 */
export function wireService(
  config: Config,
  clock: Clock,
  metrics: Metrics,
  identity?: ServiceIdentity,
  windows?: SlotWindows,
) {
  const { baseUrl, token, assistantId } = config.service;
  const budget = new ServiceBudget({
    runStartsPerMinute: config.service.runStartsPerMinute,
    requestsPerMinute: config.service.requestsPerMinute,
    clock,
    ...(windows && { windows }),
  });
  const service = new ServiceClient({
    baseUrl,
    token,
    budget,
    clock,
    // The bridge's outage loop (bridge/turn/outage.ts) is its one retry layer: no retries in here.
    maxRetries: 0,
    onRateLimited: () => metrics.serviceRateLimited.inc(),
    ...(identity && {
      credentials: identity.credentials,
      onRequest: (entry) => identity.logger.debug(entry, "service request"),
    }),
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
