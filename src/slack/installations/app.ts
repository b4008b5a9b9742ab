import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  App,
  type InstallationStore as BoltInstallationStore,
  type Logger as BoltLogger,
  type CustomRoute,
  HTTPReceiver,
  SocketModeReceiver,
} from "@slack/bolt";
import type { WebClientOptions } from "@slack/web-api";
import { isEventNotRecorded } from "../receiving/event-not-recorded.js";
import type { LinkTokenIntake } from "../surfaces/link-token.js";
import type { InstallCallbacks } from "./install-rule.js";

export type BoltApp = App;

/** Slack's OAuth install flow (many workspaces), served by Bolt's own installer. */
export interface SlackInstallOptions {
  clientId: string;
  clientSecret: string;
  stateSecret: string;
  /** Where installations are kept, and found again for every event (`authorize`). */
  installationStore: BoltInstallationStore;
  /** The bot scopes asked for. */
  scopes: readonly string[];
  /** Bolt's hooks around the code exchange: who may install (install-rule.ts). */
  callbacks: InstallCallbacks;
  /** Socket Mode only: the port of the install pages' own server (PORT; 0: any free one). */
  port: number;
}

/** Where the install flow starts (a redirect to Slack) and where Slack sends the person back. */
export const INSTALL_PATH = "/slack/install";
export const REDIRECT_PATH = "/slack/oauth_redirect";

export interface SlackAppOptions {
  /** The one workspace's bot token; undefined with `install` (each installation has its own). */
  botToken: string | undefined;
  /** Set → many workspaces: the install flow, and every event authorized by its installation. */
  install?: SlackInstallOptions | undefined;
  /** Set → Socket Mode. */
  appToken: string | undefined;
  /** Required in HTTP mode. */
  signingSecret: string | undefined;
  apiUrl: string;
  logger: BoltLogger;
  /** Extra HTTP routes (health, metrics) served on the HTTP port in HTTP mode. */
  routes: CustomRoute[];
  /** Largest accepted request body in HTTP mode, bytes; default 1 MiB (Slack's are far smaller). */
  bodyLimit?: number;
  /** Told of every error a listener throws (after Bolt has caught it). */
  onListenerError: (error: unknown) => void;
  /**
   * Takes a person's token out of every payload where it enters, before Bolt or the Socket
   * Mode client could log it (link-token.ts); the link form's listener claims it there.
   */
  linkTokens: LinkTokenIntake;
}

/**
 * The Web API client options every client of the app uses. The client never retries a
 * call itself (`retries: 0`, set explicitly: Socket Mode would otherwise silently raise it
 * to 100 for every listener's client): a post it sent again after a 500 or a lost answer
 * could appear twice, and the bridge has its own retry layer, which looks in the thread
 * before posting again (post-once.ts) and paces edits. Rate-limited calls are rejected at
 * once (not queued) so the pacer and the post gate can schedule around a 429 instead of
 * the WebClient pausing its whole queue. A call gives up after `timeout`, 15 s.
 */
export function webClientOptions(apiUrl: string, logger: BoltLogger): WebClientOptions {
  return {
    slackApiUrl: apiUrl,
    logger,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: 15_000,
  };
}

/**
 * The OAuth options both receivers take: Bolt's installer (@slack/oauth's InstallProvider)
 * at INSTALL_PATH and REDIRECT_PATH. `directInstall`: the install path goes straight to
 * Slack's authorize page (no landing page of ours). The installer's own WebClient
 * (oauth.v2.access, auth.test of the new token) gets the app's client options, so it calls
 * SLACK_API_URL too: a custom receiver is not given the App's.
 */
function installerSettings(
  install: SlackInstallOptions,
  clientOptions: WebClientOptions,
  socketMode: boolean,
) {
  return {
    clientId: install.clientId,
    clientSecret: install.clientSecret,
    stateSecret: install.stateSecret,
    installationStore: install.installationStore,
    scopes: [...install.scopes],
    installerOptions: {
      directInstall: true,
      installPath: INSTALL_PATH,
      redirectUriPath: REDIRECT_PATH,
      clientOptions,
      callbackOptions: install.callbacks,
      // HTTP mode serves them on the Slack port itself.
      ...(socketMode && { port: install.port }),
    },
  };
}

/** Builds the Bolt app on the transport the settings ask for. Transport lives only here. */
export function createSlackApp(options: SlackAppOptions): BoltApp {
  const clientOptions = webClientOptions(options.apiUrl, options.logger);
  const { appToken } = options;
  const install =
    options.install && installerSettings(options.install, clientOptions, Boolean(appToken));
  // With the installer, Bolt's `authorize` finds each event's installation: no single token.
  const token = install ? undefined : options.botToken;
  if (appToken) {
    const receiver = new SocketModeReceiver({
      appToken,
      logger: options.logger,
      // apps.connections.open goes through this client: it must use the same base URL.
      installerOptions: { clientOptions },
      autoReconnectEnabled: true,
      // The install pages get a server of their own (on PORT), with the ops routes on it
      // unless OPS_PORT moves them.
      ...(install && { ...install, customRoutes: options.routes }),
    });
    const app = new App({
      token,
      receiver,
      logger: options.logger,
      clientOptions,
      deferInitialization: true,
    });
    withdrawFromSocket(receiver, options.linkTokens, options.logger);
    acknowledgeAfterListeners(receiver, app, options.logger);
    refuseUnrecorded(app, options.onListenerError);
    installServers.set(app, receiver);
    return app;
  }
  if (!options.signingSecret) throw new Error("SLACK_SIGNING_SECRET is required in HTTP mode.");
  const receiver = new HTTPReceiver({
    signingSecret: options.signingSecret,
    endpoints: "/slack/events",
    logger: options.logger,
    customRoutes: options.routes,
    // The response to Slack is sent once the listener has returned, so a message is
    // recorded as a turn before Slack is told it arrived: a crash in between makes Slack
    // retry rather than lose the question. Listeners therefore return within a few
    // milliseconds and leave slow work (Web API calls, stops) running after they return.
    processBeforeResponse: true,
    signatureVerification: true,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    ...install,
  });
  const app = new App({
    token,
    receiver,
    logger: options.logger,
    clientOptions,
    // Bolt would otherwise call auth.test from its constructor, where a failure becomes an
    // unhandled rejection that kills the process with a stack trace; `verifySlackToken`
    // runs it at start instead, where it can fail with one clear sentence.
    deferInitialization: true,
  });
  withdrawFromBodies(app, options.linkTokens);
  refuseUnrecorded(app, options.onListenerError);
  return app;
}

/**
 * Socket Mode: each message of the socket goes through `intake` before the Socket Mode client
 * reads it, since the client writes every message whole to its log at debug. A message that
 * is not JSON is dropped here, unlogged: the client would only log it whole and ignore it.
 * The client reads its socket through one `ws_message` listener; anything else means the
 * library changed under the bot, and the bot refuses to start rather than risk the log.
 */
function withdrawFromSocket(
  receiver: InstanceType<typeof SocketModeReceiver>,
  intake: LinkTokenIntake,
  logger: BoltLogger,
): void {
  const client = receiver.client;
  const readers = client.listeners("ws_message") as ((data: unknown, binary: boolean) => void)[];
  const [read] = readers;
  if (read === undefined || readers.length !== 1) {
    throw new Error(
      "@slack/socket-mode no longer reads its socket through one ws_message listener: the link form's tokens could reach its log.",
    );
  }
  client.removeAllListeners("ws_message");
  client.on("ws_message", (data: unknown, binary: boolean) => {
    // Binary messages are ignored by the client, unread and unlogged.
    if (binary) return read.call(client, data, binary);
    const text = typeof data === "string" ? data : new TextDecoder().decode(data as ArrayBuffer);
    let message: { payload?: unknown } | undefined;
    try {
      message = JSON.parse(text) as { payload?: unknown } | undefined;
    } catch {
      logger.warn("A Socket Mode message that is not JSON was ignored.");
      return;
    }
    const changed = intake.withdraw(message?.payload);
    return read.call(client, changed ? JSON.stringify(message) : text, false);
  });
}

/**
 * HTTP mode: each request's body goes through `intake` as the receiver hands it to the App,
 * before the App or a listener could log it (the receiver itself logs no body).
 */
function withdrawFromBodies(app: App, intake: LinkTokenIntake): void {
  const processEvent = app.processEvent.bind(app);
  app.processEvent = (event) => {
    intake.withdraw(event.body);
    return processEvent(event);
  };
}

/** Socket Mode receivers, by app: their install pages' server, once started. */
const installServers = new WeakMap<App, SocketModeReceiver>();

/**
 * The port of a Socket Mode app's own HTTP server (the install pages), once it listens;
 * undefined without one. Bolt keeps the server in a field it does not type, read here only.
 */
export async function installServerPort(app: BoltApp): Promise<number | undefined> {
  const server = (installServers.get(app) as unknown as { httpServer?: Server } | undefined)
    ?.httpServer;
  if (server === undefined) return undefined;
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once("listening", resolve);
      server.once("error", reject);
    });
  }
  return listeningPort(server);
}

/**
 * Bolt answers Slack (HTTP 200, the Socket Mode ack) even when a listener throws, unless
 * the global error handler throws too. An event whose question could not be recorded is
 * rethrown here, so HTTP mode answers 500 (HTTPReceiver) and Socket Mode sends no ack
 * (acknowledgeAfterListeners): either way Slack delivers it again.
 */
function refuseUnrecorded(app: App, onListenerError: (error: unknown) => void): void {
  app.error(async (error) => {
    onListenerError(error);
    if (isEventNotRecorded(error)) throw error;
  });
}

/**
 * Checks the bot token with Slack (auth.test) and finishes Bolt's initialization. Fails
 * with a message naming the variable and what Slack said, never the token itself.
 */
export async function verifySlackToken(app: BoltApp, apiUrl: string): Promise<void> {
  try {
    await app.init();
  } catch (error) {
    const code = (error as { code?: unknown; data?: { error?: unknown } }).data?.error;
    if (typeof code === "string") {
      throw new Error(`Slack refused SLACK_BOT_TOKEN (${code}). Check the bot token of your app.`);
    }
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Could not reach Slack at ${apiUrl} to check SLACK_BOT_TOKEN: ${reason}`);
  }
}

/** The port an HTTP-mode app listens on after `app.start(port)`. */
export function listeningPort(server: unknown): number | undefined {
  const address = (server as Server | undefined)?.address?.();
  return address && typeof address === "object" ? (address as AddressInfo).port : undefined;
}

/**
 * Socket Mode's counterpart of `processBeforeResponse`. Bolt acknowledges an Events API
 * envelope before any listener runs, so a crash just after would lose the message: Slack
 * does not send an acknowledged envelope again. Here the acknowledgement (with any
 * response payload a listener gave) is sent once the listeners have returned, so the turn
 * is recorded first; listeners return within milliseconds (slow work is detached).
 */
function acknowledgeAfterListeners(
  receiver: InstanceType<typeof SocketModeReceiver>,
  app: App,
  logger: BoltLogger,
): void {
  const client = receiver.client;
  client.removeAllListeners("slack_event");
  client.on(
    "slack_event",
    async (args: {
      body: Record<string, unknown>;
      ack: (response?: Record<string, unknown>) => Promise<void>;
      retry_num?: number;
      retry_reason?: string;
    }) => {
      let response: Record<string, unknown> | undefined;
      let acknowledged = false;
      const ack = async (body?: unknown) => {
        if (acknowledged) return;
        acknowledged = true;
        // Passed on as Bolt's own Socket Mode ack passes it.
        response = body as Record<string, unknown> | undefined;
      };
      try {
        await app.processEvent({
          body: args.body,
          ack,
          ...(args.retry_num !== undefined ? { retryNum: args.retry_num } : {}),
          ...(args.retry_reason !== undefined ? { retryReason: args.retry_reason } : {}),
          customProperties: {},
        });
      } catch (error) {
        // Not acknowledged, so Slack sends the envelope again.
        if (isEventNotRecorded(error)) return;
        logger.error(`Socket Mode event failed: ${error instanceof Error ? error.message : error}`);
      }
      try {
        await args.ack(response);
      } catch (error) {
        logger.warn(`Socket Mode ack failed: ${error instanceof Error ? error.message : error}`);
      }
    },
  );
}
