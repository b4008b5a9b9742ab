import { Bridge } from "./bridge/bridge.js";
import { Relay } from "./bridge/relay.js";
import { TurnContent } from "./bridge/turn-content.js";
import { TurnRunner } from "./bridge/turn-runner.js";
import type { Config } from "./config.js";
import { boltLogger, type Logger } from "./logger.js";
import { createMetrics, type Metrics } from "./observability/metrics.js";
import { type OpsServer, startOpsServer } from "./observability/ops-server.js";
import { type OpsRoute, opsRoutes } from "./observability/routes.js";
import { serviceProbe } from "./observability/service-probe.js";
import { type SlackConnection, watchSlackConnection } from "./observability/slack-connection.js";
import { ServiceBudget } from "./service/budget.js";
import { ServiceClient } from "./service/client.js";
import { type BoltApp, createSlackApp, listeningPort, verifySlackToken } from "./slack/app.js";
import { registerControls } from "./slack/controls.js";
import { registerMessageListeners } from "./slack/listeners.js";
import { Pacer } from "./slack/pacer.js";
import { PostGate } from "./slack/post-gate.js";
import { PacedEdits } from "./slack/reply.js";
import type { ReplyPayload } from "./slack/reply-blocks.js";
import { findReplyInThread } from "./slack/reply-lookup.js";
import { CallScheduler } from "./slack/scheduler.js";
import { registerShortcut } from "./slack/shortcut.js";
import { SlackThreadHistory } from "./slack/thread-history.js";
import { UserDirectory } from "./slack/user-directory.js";
import { slackWebApi } from "./slack/web-api.js";
import { openSqliteStores } from "./store/sqlite/open.js";
import type { Stores } from "./store/stores.js";
import { type Clock, settleWithin, systemClock } from "./time.js";

export interface Bot {
  app: BoltApp;
  bridge: Bridge;
  stores: Stores;
  metrics: Metrics;
  service: ServiceClient;
  /** Starts Slack and resumes unfinished turns; resolves with the HTTP port. */
  start(): Promise<{ port: number }>;
  /** Stops taking events, gives running answers `graceMs` to finish, then closes everything. */
  stop(graceMs?: number): Promise<void>;
}

/** The composition root: config → store → service client → bridge → Slack app. */
export function createBot(config: Config, logger: Logger, clock: Clock = systemClock): Bot {
  const metrics = createMetrics();
  const stores = openSqliteStores(config.databasePath, () => clock.now());
  const { conversations, turns, settings } = stores;

  const budget = new ServiceBudget({
    runStartsPerMinute: config.service.runStartsPerMinute,
    requestsPerMinute: config.service.requestsPerMinute,
    clock,
  });
  const service = new ServiceClient({
    baseUrl: config.service.baseUrl,
    token: config.service.token,
    budget,
    clock,
    // The bridge's outage loop (bridge/outage.ts) is its one retry layer: no retries in here.
    maxRetries: 0,
    onRateLimited: () => metrics.serviceRateLimited.inc(),
  });

  // Readiness asks the service once, without retries, through the same budget.
  const probeClient = new ServiceClient({
    baseUrl: config.service.baseUrl,
    token: config.service.token,
    budget,
    clock,
    maxRetries: 0,
    connectTimeoutMs: 2_000,
    headersTimeoutMs: 2_000,
  });
  const probeService = serviceProbe({
    request: ({ signal, onQueued }) =>
      probeClient.listThreads(
        { assistantId: config.service.assistantId },
        { maxPages: 1, signal, onQueued },
      ),
  });

  // The Slack check reads the app's connection, which exists once the app is built below.
  let slackConnection: SlackConnection | undefined;
  const routes: OpsRoute[] = opsRoutes(metrics, {
    checks: {
      database: () => stores.ping(),
      slack: () => slackConnection?.connected() ?? false,
      service: probeService,
    },
  });

  const app = createSlackApp({
    botToken: config.slack.botToken,
    appToken: config.slack.appToken,
    signingSecret: config.slack.signingSecret,
    apiUrl: config.slack.apiUrl,
    logger: boltLogger(logger),
    routes,
  });
  slackConnection = watchSlackConnection(app);
  const slack = slackWebApi(app.client);

  // One scheduler for every Slack call the replies make: edits and posts are policies on it.
  const scheduler = new CallScheduler({ clock });
  const pacer = new Pacer<ReplyPayload>(
    (target, payload) =>
      slack.updateMessage({ channel: target.channel, ts: target.ts, ...payload }),
    {
      scheduler,
      updatesPerMinute: config.slack.updatesPerMinute,
      onRateLimited: () => metrics.slackRateLimited.inc({ method: "chat.update" }),
      onSent: (_target, final) => metrics.edits.inc({ kind: final ? "final" : "interim" }),
    },
  );
  const postGate = new PostGate({
    scheduler,
    onRateLimited: () => metrics.slackRateLimited.inc({ method: "chat.postMessage" }),
  });
  const replies = new PacedEdits({
    client: slack,
    pacer,
    postGate,
    findReply: (where) => findReplyInThread(slack, where),
    onError: (error, what) => logger.warn({ err: errorText(error), what }, "reply update failed"),
  });

  const users = new UserDirectory({ lookup: (id) => slack.userInfo(id) });
  const content = new TurnContent({
    history: new SlackThreadHistory({
      client: { replies: (args) => slack.replies(args), whoAmI: () => slack.authTest() },
      users,
      clock,
    }),
    turns,
    conversations,
    logger,
    budgetChars: config.limits.threadContextChars,
  });

  const runner = new TurnRunner({
    service,
    relay: new Relay(service, { clock }),
    turns,
    conversations,
    settings,
    logger,
    limits: config.limits,
    clock,
    content,
    events: {
      onFinished: (_turn, outcome, runStatus) => {
        metrics.turns.inc({ outcome });
        if (runStatus) metrics.runs.inc({ status: runStatus });
      },
    },
  });
  const bridge = new Bridge({
    conversations,
    turns,
    runner,
    logger,
    assistantFor: () => config.service.assistantId,
    replies,
    maxQueuedPerPerson: config.limits.maxQueuedTurnsPerPerson,
    onFirstText: (turn) => metrics.firstText.observe((clock.now() - turn.createdAt) / 1000),
  });

  registerMessageListeners(app, {
    bridge,
    users,
    slack,
    logger,
    onInbound: (result) => metrics.inbound.inc({ result }),
  });
  registerControls(app, { bridge, settings, logger, slack });
  registerShortcut(app, {
    bridge,
    logger,
    slack,
    postQuestion: (target, text) =>
      postGate.post(target, async () => {
        const posted = await slack.postMessage({
          channel: target.channel,
          thread_ts: target.threadTs,
          text,
        });
        return posted.ts;
      }),
  });
  app.error(async (error) => {
    logger.error({ err: errorText(error) }, "Slack listener failed");
  });

  metrics.watch({
    serviceQueues: () => budget.snapshot(),
    pendingEdits: () => pacer.stats().pending,
    activeConversations: () => bridge.pendingConversations,
  });

  let opsServer: OpsServer | undefined;
  return {
    app,
    bridge,
    stores,
    metrics,
    service,
    async start() {
      await verifySlackToken(app, config.slack.apiUrl);
      let port: number;
      if (config.slack.appToken) {
        // Socket Mode: health and metrics on a small server of their own.
        opsServer = await startOpsServer(routes, config.port);
        port = opsServer.port;
        await app.start();
      } else {
        const server = await app.start(config.port);
        port = listeningPort(server) ?? config.port;
      }
      slackConnection?.started();
      const resumed = bridge.resume();
      logger.info(
        { mode: config.slack.appToken ? "socket" : "http", port, resumed },
        "assistant bridge started",
      );
      return { port };
    },
    async stop(graceMs = config.limits.shutdownGraceMs) {
      // From now on new messages are only recorded; answers being written get the grace.
      bridge.close();
      // Not ready from the start of the shutdown: a load balancer sends new events elsewhere.
      slackConnection?.stopped();
      await settleWithin(bridge.idle(), graceMs);
      // What is left stops where it is, stored as it is, and resumes at the next start.
      bridge.shutdown();
      await settleWithin(bridge.idle(), UNWIND_MS);
      // A client that holds its connection open (a half-sent request) must not hold the exit.
      await settleWithin(app.stop(), UNWIND_MS);
      await opsServer?.close();
      scheduler.close();
      await service.close();
      await probeClient.close();
      stores.close();
      logger.info({}, "assistant bridge stopped");
    },
  };
}

/** How long turns may take to unwind once told to stop, after the grace period, ms. */
const UNWIND_MS = 2_000;

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
