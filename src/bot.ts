import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Bridge } from "./bridge/bridge.js";
import type { Config, OAuthConfig } from "./config.js";
import { botLifecycle } from "./lifecycle.js";
import { boltLogger, type Logger } from "./logger.js";
import { createMetrics, type Metrics } from "./observability/metrics.js";
import { opsRoutes } from "./observability/routes.js";
import { type SlackConnection, watchSlackConnection } from "./observability/slack-connection.js";
import { problemNote } from "./people/link-notices.js";
import { refusalConfirmed } from "./people/token-check.js";
import type { ServiceClient } from "./service/client.js";
import { type BoltApp, createSlackApp } from "./slack/installations/app.js";
import { BOT_SCOPES } from "./slack/installations/bot-scopes.js";
import {
  Installation,
  ManyInstallations,
  type Workspaces,
} from "./slack/installations/installation.js";
import type { Installations } from "./slack/installations/installations.js";
import { registerUninstall } from "./slack/installations/uninstall.js";
import { LinkTokenIntake } from "./slack/surfaces/link-token.js";
import { slackWebApi } from "./slack/web-api/web-api.js";
import { openStores } from "./store/open.js";
import { Retention } from "./store/retention.js";
import type { Stores } from "./store/stores.js";
import type { Turn } from "./store/turn.js";
import { type Clock, systemClock } from "./time.js";
import { wireCore } from "./wiring/core.js";
import { wireInstallations, wireInstallRule } from "./wiring/installations.js";
import { registerListeners } from "./wiring/listeners.js";
import { wirePeople } from "./wiring/people.js";
import { wireService } from "./wiring/service.js";
import { replicaBudgets } from "./wiring/shared-budgets.js";
import { errorText, wireSlack } from "./wiring/slack.js";

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
  const people = wirePeople(config, stores, logger, (owner, token) =>
    // The service is wired below, with these people's identities; a refusal comes later.
    refusalConfirmed(service.service, {
      user: owner.user,
      token,
      sharedToken: config.service.token,
      assistantId: people.assistants.default.id,
      timeoutMs: 2_500,
    }),
  );
  // Replicas on one PostgreSQL database share Slack's and the service's budgets there.
  const { url } = config.database;
  // This process among the replicas: its leases and its places in the budgets' queues.
  const holder = replicaName();
  const budgets = url === undefined ? undefined : replicaBudgets(url, holder, metrics, logger);
  const service = wireService(
    config,
    clock,
    metrics,
    { credentials: people.identities, logger },
    budgets?.slotWindows,
  );

  // The Slack check reads the app's connection, which exists once the app is built below.
  let connection: SlackConnection | undefined;
  const routes = opsRoutes(
    metrics,
    {
      clock,
      checks: {
        database: () => stores.ping(),
        slack: () => connection?.connected() ?? false,
        service: service.probe,
      },
    },
    { metricsToken: config.ops.metricsToken },
  );
  const { botToken, appToken, signingSecret, apiUrl } = config.slack;
  const installations = wireInstallations(config, stores, logger);
  // A person's token is taken out of each payload where it enters, for the link form alone.
  const linkTokens = new LinkTokenIntake();
  const app = createSlackApp({
    botToken,
    install: installations && {
      ...(config.slack.oauth as OAuthConfig),
      installationStore: installations.forBolt(),
      scopes: BOT_SCOPES,
      // A refused installation's token is revoked with the app's own client (SLACK_API_URL).
      callbacks: wireInstallRule(config.slack.oauth as OAuthConfig, logger, async (token) => {
        await app.client.auth.revoke({ token });
      }),
      port: config.port,
    },
    appToken,
    signingSecret,
    apiUrl,
    // On the Slack port only when they have no server of their own (HTTP mode, no OPS_PORT).
    routes: config.ops.server ? [] : routes,
    logger: boltLogger(logger),
    onListenerError: (error) => {
      // Many workspaces: an event of a workspace without an installation (it removed the app).
      if ((error as { code?: unknown }).code === "slack_bolt_authorization_error") {
        logger.info({ err: errorText(error) }, "an event of a workspace not installed was ignored");
        return;
      }
      logger.error({ err: errorText(error) }, "Slack listener failed");
    },
    linkTokens,
  });
  connection = watchSlackConnection(app);
  // One workspace on SLACK_BOT_TOKEN, or each installation's own (many workspaces).
  const single = installations ? undefined : new Installation(slackWebApi(app.client));
  const workspaces: Workspaces =
    single ?? new ManyInstallations(app.client, installations as Installations);
  const slack = wireSlack(workspaces, config, clock, metrics, logger, {
    ...(budgets && { allowances: budgets.allowances }),
    // The asker stopped a streamed answer with Slack's own control: as if they pressed Stop.
    onStreamStopped: ({ turnId, asker }) => {
      if (asker === undefined) return;
      bridge.stop(turnId, asker).catch((error: unknown) => {
        logger.warn({ turn: turnId, err: errorText(error) }, "could not stop a turn");
      });
    },
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
    onTurnFinished: (turn) => tellLinkProblem(turn),
  });
  /**
   * A person whose own token failed one of their turns, or who asked in a conversation that
   * is not theirs to continue, is told privately, once.
   */
  const tellLinkProblem = (turn: Turn) => {
    const problem = people.notices.take(turn.team, turn.user);
    if (problem === undefined) return;
    const { team, channel, user, threadTs } = turn;
    slack.notes.tell({
      team,
      channel,
      user,
      threadTs,
      text: problemNote(problem, config.people.linkTokenHelp),
    });
  };

  if (installations) {
    registerUninstall(app, {
      installations,
      workspaces,
      abandon: (team, gone) => bridge.abandon(team, gone),
      logger,
    });
  }
  registerListeners(app, {
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
  metrics.watch({
    serviceQueues: () => service.budget.snapshot(),
    pendingEdits: () => slack.pacer.stats().pending,
    activeConversations: () => bridge.pendingConversations,
    leasesHeld: () => bridge.leasesHeld,
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
    retention: new Retention({
      turns: stores.turns,
      feedback: stores.feedback,
      retentionMs: config.retentionMs,
      clock,
      logger,
    }),
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
