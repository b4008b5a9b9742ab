import type { Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Bridge } from "./bridge/bridge.js";
import { Relay } from "./bridge/relay.js";
import { TurnRunner } from "./bridge/turn-runner.js";
import type { Config } from "./config.js";
import { boltLogger, type Logger } from "./logger.js";
import { createMetrics, type Metrics } from "./observability/metrics.js";
import { type OpsRoute, opsRoutes } from "./observability/routes.js";
import { ServiceBudget } from "./service/budget.js";
import { ServiceClient } from "./service/client.js";
import { RateLimitedError } from "./service/errors.js";
import { type BoltApp, createSlackApp, listeningPort } from "./slack/app.js";
import { registerControls } from "./slack/controls.js";
import { registerMessageListeners } from "./slack/listeners.js";
import { Pacer } from "./slack/pacer.js";
import { PostGate } from "./slack/post-gate.js";
import { SlackReplySink } from "./slack/reply.js";
import type { ReplyPayload } from "./slack/reply-blocks.js";
import { UserDirectory } from "./slack/user-directory.js";
import { ConversationStore } from "./store/conversations.js";
import { type Db, openDatabase } from "./store/db.js";
import { SettingsStore } from "./store/settings.js";
import { TurnStore } from "./store/turns.js";

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

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

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

  let slackConnected = false;
  const routes: OpsRoute[] = opsRoutes(metrics, {
    checks: {
      database: () => db.prepare("SELECT 1 AS ok").get() !== undefined,
      slack: () => slackConnected,
      service: async () => {
        try {
          await service.listThreads({ assistantId: config.service.assistantId }, { maxPages: 1 });
          return true;
        } catch (error) {
          return error instanceof RateLimitedError;
        }
      },
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
    onError: (error, what) => logger.warn({ err: errorText(error), what }, "reply update failed"),
  });

  const arrivals = new Map<string, number>();
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
    events: {
      onFirstText: (turn) => {
        const arrived = arrivals.get(turn.id);
        if (arrived !== undefined) metrics.firstText.observe((Date.now() - arrived) / 1000);
      },
      onFinished: (turn, outcome, runStatus) => {
        arrivals.delete(turn.id);
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
  app.error(async (error) => {
    logger.error({ err: errorText(error) }, "Slack listener failed");
  });

  const gauges = setInterval(() => {
    for (const lane of budget.snapshot()) metrics.queueLength.set({ kind: lane.kind }, lane.queued);
    metrics.pendingEdits.set(pacer.stats().pending);
    metrics.activeConversations.set(bridge.pendingConversations);
  }, 5_000);
  gauges.unref();

  let opsServer: Server | undefined;
  return {
    app,
    bridge,
    db,
    metrics,
    service,
    async start() {
      let port: number;
      if (config.slack.appToken) {
        // Socket Mode: health and metrics on a small server of their own.
        opsServer = createServer((req, res) => {
          const route = routes.find(
            (r) => r.path === req.url?.split("?")[0] && r.method === req.method,
          );
          if (!route) {
            res.writeHead(404).end();
            return;
          }
          void route.handler(req, res);
        });
        await new Promise<void>((resolve) => opsServer?.listen(config.port, resolve));
        port = (opsServer.address() as AddressInfo).port;
        await app.start();
      } else {
        const server = await app.start(config.port);
        port = listeningPort(server) ?? config.port;
      }
      slackConnected = true;
      const resumed = bridge.resume();
      logger.info(
        { mode: config.slack.appToken ? "socket" : "http", port, resumed },
        "assistant bridge started",
      );
      return { port };
    },
    async stop(graceMs = 10_000) {
      bridge.close();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        bridge.idle(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
      slackConnected = false;
      clearInterval(gauges);
      await app.stop().catch(() => undefined);
      if (opsServer) await new Promise<void>((resolve) => opsServer?.close(() => resolve()));
      pacer.close();
      await service.close();
      db.close();
      logger.info({}, "assistant bridge stopped");
    },
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
