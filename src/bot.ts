import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Bridge } from "./bridge/bridge.js";
import type { Config } from "./config.js";
import { botLifecycle } from "./lifecycle.js";
import type { Logger } from "./logger.js";
import { createMetrics, type Metrics } from "./observability/metrics.js";
import type { ServiceClient } from "./service/client.js";
import type { BoltApp } from "./slack/installations/app.js";
import { openStores } from "./store/open.js";
import type { Stores } from "./store/stores.js";
import { type Clock, systemClock } from "./time.js";
import { wireApp } from "./wiring/app.js";
import { wireCore } from "./wiring/core.js";
import { registerListeners } from "./wiring/listeners.js";
import { tellLinkProblems, wirePeople } from "./wiring/people.js";
import { wireService } from "./wiring/service.js";
import { replicaBudgets } from "./wiring/shared-budgets.js";
import { stopOnSlackStop, wireSlack } from "./wiring/slack.js";

export interface Bot {
  app: BoltApp;
  bridge: Bridge;
  stores: Stores;
  metrics: Metrics;
  service: ServiceClient;
  /**
   * Starts Slack and resumes unfinished turns; resolves with the HTTP port (Socket Mode: the
   * install pages' server with SLACK_CLIENT_ID…, else the ops server's) and the port the ops
   * routes are served on.
   */
  start(): Promise<{ port: number; opsPort: number }>;
  /** Stops taking events, gives running answers `graceMs` to finish, then closes everything. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The composition root: config → store → service client → Slack app → bridge → listeners.
 * It only wires; each side is put together in `wiring/`, start and stop in `lifecycle.ts`.
 */
export async function createBot(
  config: Config,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<Bot> {
  const metrics = createMetrics();
  const stores = await openStores({ path: config.databasePath, url: config.database.url }, () =>
    clock.now(),
  );
  // People's tokens are keyed by the installation's workspace, known once Slack is wired below
  // (one workspace: config.ts keeps people's own tokens out of many workspaces for now).
  const people = wirePeople(config, stores, logger, () => service.service);
  // This process among the replicas: its leases, its places in the budgets' queues. Replicas
  // on one PostgreSQL database share Slack's and the service's budgets there.
  const holder = replicaName();
  const { url } = config.database;
  const budgets = url === undefined ? undefined : replicaBudgets(url, holder, metrics, logger);
  const credentials = { credentials: people.identities, logger };
  const service = wireService(config, clock, metrics, credentials, budgets?.slotWindows);
  const { app, connection, routes, workspaces, single, installations, linkTokens } = wireApp({
    config,
    logger,
    clock,
    metrics,
    stores,
    service: service.probe,
  });
  const slack = wireSlack(workspaces, config, clock, metrics, logger, {
    ...(budgets && { allowances: budgets.allowances }),
    // The asker stopped a streamed answer with Slack's own control: as if they pressed Stop.
    onStreamStopped: stopOnSlackStop(() => bridge, logger),
  });
  const bridge = wireCore({
    config,
    holder,
    clock,
    metrics,
    logger,
    stores,
    service: service.service,
    replies: slack.replies,
    history: slack.history,
    files: slack.files,
    assistantFor: (inbound) => people.assistants.forNewConversation(inbound),
    // A person whose own token failed, or who may not continue the conversation, is told.
    onTurnFinished: tellLinkProblems(people, slack.notes, config.people.linkTokenHelp),
  });
  registerListeners(app, {
    installations,
    workspaces,
    config,
    stores,
    bridge,
    slack,
    metrics,
    logger,
    people,
    service: service.service,
    linkTokens,
  });
  const serviceQueues = () => service.budget.snapshot();
  metrics.watch({
    serviceQueues,
    pendingEdits: () => slack.pacer.stats().pending,
    ...bridge.gauges,
  });
  const lifecycle = botLifecycle({
    app,
    bridge,
    config,
    routes,
    connection,
    logger,
    clock,
    // Many workspaces: each is asked when its first event arrives.
    ...(single && { warm: () => single.whoAmI() }),
    ...(installations && { installations }),
    stores,
    release: [
      () => slack.native?.close(),
      () => slack.scheduler.close(),
      () => service.close(),
      () => budgets?.close(),
      () => stores.close(),
    ],
  });
  return { app, bridge, stores, metrics, service: service.service, ...lifecycle };
}

/** This process among the replicas: its host, its pid, and a random part for restarts. */
function replicaName(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}
