import { setTimeout as delay } from "node:timers/promises";
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
import { SlackReplySink } from "./slack/reply.js";
import type { ReplyPayload } from "./slack/reply-blocks.js";
import { findReplyInThread } from "./slack/reply-lookup.js";
import { registerShortcut } from "./slack/shortcut.js";
import { SlackThreadHistory } from "./slack/thread-history.js";
import { UserDirectory } from "./slack/user-directory.js";
import { ConversationStore } from "./store/conversations.js";
import { type Db, openDatabase } from "./store/db.js";
import { SettingsStore } from "./store/settings.js";
import { TurnStore } from "./store/turns.js";
import { settleWithin } from "./time.js";

export interface Bot {
  app: BoltApp;
  bridge: Bridge;
  db: Db;
  metrics: Metrics;
  service: ServiceClient;
  /** Starts Slack and resumes unfinished turns; resolves with the HTTP port. */
  start(): Promise<{ port: number }>;
  /** Stops taking events, gives running answers `graceMs` to finish, then closes everything. */
  stop(graceMs?: number): Promise<void>;
}

/** Node's abortable timer: rejects when the signal aborts. */
const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  delay(ms, undefined, signal ? { signal } : {});

/** The composition root: config → store → service client → bridge → Slack app. */
export function createBot(config: Config, logger: Logger): Bot {
  const metrics = createMetrics();
  const db = openDatabase(config.databasePath);
  const conversations = new ConversationStore(db);
  const turns = new TurnStore(db);
  const settings = new SettingsStore(db);

  const budget = new ServiceBudget({
    runStartsPerMinute: config.service.runStartsPerMinute,
    requestsPerMinute: config.service.requestsPerMinute,
  });
  const service = new ServiceClient({
    baseUrl: config.service.baseUrl,
    token: config.service.token,
    budget,
    onRateLimited: () => metrics.serviceRateLimited.inc(),
  });

  // Readiness asks the service once, without retries, through the same budget.
  const probeClient = new ServiceClient({
    baseUrl: config.service.baseUrl,
    token: config.service.token,
    budget,
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
      database: () => db.open && db.prepare("SELECT 1 AS ok").get() !== undefined,
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

  const pacer = new Pacer<ReplyPayload>(
    async (target, payload) => {
      await app.client.chat.update({ channel: target.channel, ts: target.ts, ...payload } as never);
    },
    {
      updatesPerMinute: config.slack.updatesPerMinute,
      onRateLimited: () => metrics.slackRateLimited.inc({ method: "chat.update" }),
      onSent: (_target, final) => metrics.edits.inc({ kind: final ? "final" : "interim" }),
    },
  );
  const postGate = new PostGate({
    onRateLimited: () => metrics.slackRateLimited.inc({ method: "chat.postMessage" }),
  });
  const replies = new SlackReplySink({
    client: {
      postMessage: async (args) => {
        const result = await app.client.chat.postMessage({
          ...args,
          unfurl_links: false,
          unfurl_media: false,
        } as never);
        return { ts: String(result.ts) };
      },
      deleteMessage: async (args) => {
        await app.client.chat.delete(args);
      },
    },
    pacer,
    postGate,
    findReply: (where) => findReplyInThread(app, where),
    onError: (error, what) => logger.warn({ err: errorText(error), what }, "reply update failed"),
  });

  const users = new UserDirectory({
    lookup: async (id) => {
      const result = await app.client.users.info({ user: id });
      const user = result.user as
        | {
            name?: string;
            real_name?: string;
            profile?: { display_name?: string; real_name?: string };
          }
        | undefined;
      const name =
        user?.profile?.display_name || user?.profile?.real_name || user?.real_name || user?.name;
      return name ? { displayName: name } : undefined;
    },
  });
  const content = new TurnContent({
    history: new SlackThreadHistory({
      client: {
        replies: (args) => app.client.conversations.replies(args),
        whoAmI: async () => {
          const me = await app.client.auth.test();
          return { userId: String(me.user_id), botId: me.bot_id ? String(me.bot_id) : undefined };
        },
      },
      users,
      sleep,
    }),
    turns,
    conversations,
    logger,
    budgetChars: config.limits.threadContextChars,
  });

  const runner = new TurnRunner({
    service,
    relay: new Relay(service),
    turns,
    conversations,
    settings,
    replies,
    logger,
    limits: config.limits,
    now: Date.now,
    sleep,
    content,
    events: {
      onFirstText: (turn) => metrics.firstText.observe((Date.now() - turn.createdAt) / 1000),
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
  });

  registerMessageListeners(app, {
    bridge,
    users,
    logger,
    onInbound: (result) => metrics.inbound.inc({ result }),
  });
  registerControls(app, {
    bridge,
    settings,
    logger,
    permalink: async (channel, ts) => {
      const result = await app.client.chat.getPermalink({ channel, message_ts: ts });
      return typeof result.permalink === "string" ? result.permalink : undefined;
    },
  });
  registerShortcut(app, {
    bridge,
    logger,
    postQuestion: (target, text) =>
      postGate.post(target, async () => {
        const result = await app.client.chat.postMessage({
          channel: target.channel,
          thread_ts: target.threadTs,
          text,
          unfurl_links: false,
          unfurl_media: false,
        });
        return String(result.ts);
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
    db,
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
      pacer.close();
      await service.close();
      await probeClient.close();
      db.close();
      logger.info({}, "assistant bridge stopped");
    },
  };
}

/** How long turns may take to unwind once told to stop, after the grace period, ms. */
const UNWIND_MS = 2_000;

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
