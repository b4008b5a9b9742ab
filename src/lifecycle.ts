import type { Bridge } from "./bridge/bridge.js";
import type { Config } from "./config.js";
import type { Logger } from "./logger.js";
import { type OpsServer, startOpsServer } from "./observability/ops-server.js";
import type { OpsRoute } from "./observability/routes.js";
import type { SlackConnection } from "./observability/slack-connection.js";
import { adoptBotToken } from "./slack/installations/adopt-bot-token.js";
import {
  type BoltApp,
  installServerPort,
  listeningPort,
  verifySlackToken,
} from "./slack/installations/app.js";
import type { Installations } from "./slack/installations/installations.js";
import { Retention } from "./store/retention.js";
import type { Stores } from "./store/stores.js";
import { type Clock, settleWithin } from "./time.js";

/** How long turns may take to unwind once told to stop, after the grace period, ms. */
const UNWIND_MS = 2_000;

export interface LifecycleParts {
  app: BoltApp;
  bridge: Bridge;
  config: Config;
  routes: OpsRoute[];
  connection: SlackConnection;
  logger: Logger;
  clock: Clock;
  /** Their old turns' texts are purged at start, then hourly, until the stop (retention.ts). */
  stores: Pick<Stores, "turns" | "feedback">;
  /**
   * Asked once the token is known good, before any event: what the first event's
   * acknowledgement would otherwise wait on (who the bot is, for admission). A failure is
   * left for that event to meet again.
   */
  warm?: () => Promise<unknown>;
  /**
   * Many workspaces: their installations. SLACK_BOT_TOKEN, when set too, is kept as its
   * workspace's installation at start.
   */
  installations?: Installations;
  /** What to release once Slack is stopped, in order (schedulers, clients, the store). */
  release: (() => void | Promise<void>)[];
}

/**
 * How the bot starts and stops. Start: check the token, listen (the ops routes get a small
 * server of their own in Socket Mode, or with OPS_PORT), then resume unfinished turns and
 * start the retention's sweeps. Stop: take no new answers, give the running ones the grace
 * period, leave the rest
 * recorded for the next start.
 */
export function botLifecycle(parts: LifecycleParts) {
  const { app, bridge, config, logger, connection, clock } = parts;
  const { turns, feedback } = parts.stores;
  const retention = new Retention({
    turns,
    feedback,
    retentionMs: config.retentionMs,
    clock,
    logger,
  });
  let opsServer: OpsServer | undefined;
  return {
    /** Starts Slack and resumes unfinished turns; resolves with the HTTP and ops ports. */
    async start(): Promise<{ port: number; opsPort: number }> {
      const { apiUrl, botToken } = config.slack;
      await verifySlackToken(app, apiUrl);
      if (parts.installations && botToken) {
        await adoptBotToken(app, parts.installations, botToken, apiUrl);
      }
      await parts.warm?.().catch(() => undefined);
      if (config.ops.server) opsServer = await startOpsServer(parts.routes, config.ops.server);
      let port: number;
      if (config.slack.appToken) {
        await app.start();
        // With the install flow, its pages (and the ops routes, without OPS_PORT) have a server.
        port = (await installServerPort(app)) ?? opsServer?.port ?? config.port;
      } else {
        const server = await app.start(config.port);
        port = listeningPort(server) ?? config.port;
      }
      const opsPort = opsServer?.port ?? port;
      connection.started();
      const resumed = await bridge.resume();
      await retention.start();
      const mode = config.slack.appToken ? "socket" : "http";
      const opsHost = config.ops.server?.host ?? "every interface";
      logger.info({ mode, port, opsHost, opsPort, resumed }, "assistant bridge started");
      return { port, opsPort };
    },

    /** Stops taking events, gives running answers `graceMs` to finish, then closes everything. */
    async stop(graceMs = config.limits.shutdownGraceMs): Promise<void> {
      // From now on new messages are only recorded; answers being written get the grace.
      bridge.close();
      // Not ready from the start of the shutdown: a load balancer sends new events elsewhere.
      connection.stopped();
      await settleWithin(bridge.idle(), graceMs, clock);
      // What is left stops where it is, stored as it is, and resumes at the next start.
      bridge.shutdown();
      await settleWithin(bridge.idle(), UNWIND_MS, clock);
      // Another replica takes the conversations on now, rather than once their leases expire.
      const handedBack = await bridge.handBack().catch((error: unknown) => {
        // They expire instead: another replica takes them on after LEASE_SECONDS.
        logger.warn({ err: String(error) }, "could not hand the conversations back");
        return 0;
      });
      if (handedBack > 0) logger.info({ conversations: handedBack }, "conversations handed back");
      // A client that holds its connection open (a half-sent request) must not hold the exit.
      await settleWithin(app.stop(), UNWIND_MS, clock);
      await opsServer?.close();
      // Before the store closes: a sweep under way finishes its batch first.
      await retention.stop();
      for (const release of parts.release) await release();
      logger.info({}, "assistant bridge stopped");
    },
  };
}
