import type { Config, OAuthConfig } from "../config.js";
import { boltLogger, type Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import { opsRoutes } from "../observability/routes.js";
import { type SlackConnection, watchSlackConnection } from "../observability/slack-connection.js";
import { type BoltApp, createSlackApp } from "../slack/installations/app.js";
import { BOT_SCOPES } from "../slack/installations/bot-scopes.js";
import {
  Installation,
  ManyInstallations,
  type Workspaces,
} from "../slack/installations/installation.js";
import type { Installations } from "../slack/installations/installations.js";
import { LinkTokenIntake } from "../slack/surfaces/link-token.js";
import { slackWebApi } from "../slack/web-api/web-api.js";
import type { Stores } from "../store/stores.js";
import type { Clock } from "../time.js";
import { wireInstallations, wireInstallRule } from "./installations.js";
import { errorText } from "./slack.js";

export interface AppParts {
  config: Config;
  logger: Logger;
  clock: Clock;
  metrics: Metrics;
  /** The database /readyz asks, and where the installations are kept (many workspaces). */
  stores: Stores;
  /** What /readyz asks of the service. */
  service: () => Promise<boolean>;
}

/**
 * The Bolt app on its transport with its ops routes (/healthz, /readyz, /metrics), and the
 * workspaces it serves: one, on SLACK_BOT_TOKEN, or each installation's own (many
 * workspaces, Bolt's installer on the installations).
 */
export function wireApp(parts: AppParts): {
  app: BoltApp;
  /** The many workspaces' installations (OAuth); undefined: one workspace, SLACK_BOT_TOKEN. */
  installations: Installations | undefined;
  /** Takes a person's token out of each payload where it enters, for the link form alone. */
  linkTokens: LinkTokenIntake;
  connection: SlackConnection;
  routes: ReturnType<typeof opsRoutes>;
  workspaces: Workspaces;
  /** The one workspace, when there is one: asked who it is at start. */
  single: Installation | undefined;
} {
  const { config, logger, stores } = parts;
  const installations = wireInstallations(config, stores, logger);
  const linkTokens = new LinkTokenIntake();
  // The Slack check reads the app's connection, which exists once the app is built below.
  let connection: SlackConnection | undefined;
  const routes = opsRoutes(
    parts.metrics,
    {
      clock: parts.clock,
      checks: {
        database: () => stores.ping(),
        slack: () => connection?.connected() ?? false,
        service: parts.service,
      },
    },
    { metricsToken: config.ops.metricsToken },
  );
  const { botToken, appToken, signingSecret, apiUrl } = config.slack;
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
  const single = installations ? undefined : new Installation(slackWebApi(app.client));
  const workspaces: Workspaces =
    single ?? new ManyInstallations(app.client, installations as Installations);
  return { app, installations, linkTokens, connection, routes, workspaces, single };
}
