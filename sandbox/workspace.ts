/**
 * A local workspace for trying the bot: the project's service simulator, the fake Slack
 * Web API, and the real bot (HTTP mode) between them, all on 127.0.0.1. The person's
 * messages reach the bot exactly as Slack's would: signed Events API requests to its
 * receiver, with the message also stored in the fake so the thread reads like Slack's.
 * With `replicas`, n copies of the bot run as child processes on PostgreSQL instead
 * (replica-bots.ts), and each request goes to one of them.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createBot } from "../src/bot.js";
import { configuredSecrets, type LogLevel, loadConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import type { Turn } from "../src/store/turn.js";
import { type FakeSlack, startFakeSlack } from "../tools/fake-slack/server.js";
import type { ScriptedAnswer } from "../tools/simulator/answers.js";
import {
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from "../tools/simulator/server.js";
import {
  appMention,
  type BotResponse,
  blockAction,
  messageEvent,
  nextTs,
  type Payload,
  postToBot,
  type RequestKind,
  slashCommand,
} from "../tools/slack-requests.js";
import { type ReplicaBots, type ReplicaView, startReplicaBots } from "./replica-bots.js";

export const SANDBOX_CHANNEL = "C0SANDBOX";
export const SANDBOX_USER = "U0YOU";

export interface WorkspaceOptions {
  simulator?: SimulatorOptions;
  /** The script every run answers with; undefined → the simulator's generated answers. */
  answer?: ScriptedAnswer;
  /** The bot's log file (created with its folder, truncated). */
  logPath: string;
  /** Default "info". */
  logLevel?: LogLevel;
  /** n replicas (child processes) on a fresh database of this PostgreSQL server. */
  replicas?: { count: number; serverUrl: string };
}

export interface Workspace {
  readonly slack: FakeSlack;
  readonly sim: RunningSimulator;
  /** The replicas, when the sandbox runs several; undefined: one bot in this process. */
  readonly replicas: ReplicaView | undefined;
  readonly channel: string;
  readonly user: string;
  /** The sandbox thread's root ts, once the first message started it. */
  readonly threadTs: string | undefined;
  /**
   * The person posts `text` in the thread: the first message @mentions the bot at top level,
   * later ones are plain replies in its thread. Resolves with the message's ts.
   */
  say(text: string): Promise<string>;
  /** `/assistant <text>` in the channel; resolves with the ephemeral acknowledgement, if any. */
  command(text: string): Promise<string | undefined>;
  /** Presses the Stop button of the reply with this turn id. */
  pressStop(turnId: string, messageTs: string): Promise<void>;
  /** The bot's turn for one of the person's messages, once the bot has recorded it. */
  turnFor(messageTs: string): Promise<Turn | undefined>;
  /** Resolves once the bot (every replica) has no turn left to run. */
  idle(): Promise<void>;
  /** Stops the bot (giving answers `graceMs` to finish), the fake Slack and the simulator. */
  close(graceMs?: number): Promise<void>;
}

export async function startWorkspace(options: WorkspaceOptions): Promise<Workspace> {
  const started: { close(): Promise<unknown> }[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "bridge-sandbox-"));
  let closing: Promise<void> | undefined;
  const closeAll = async () => {
    closing ??= (async () => {
      for (const item of started.reverse()) await item.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    })();
    return closing;
  };
  try {
    const sim = await startSimulator(options.simulator ?? {});
    started.push(sim);
    if (options.answer) sim.control.setDefaultAnswer(options.answer);
    const slack = await startFakeSlack();
    started.push(slack);
    slack.seedUser({ id: SANDBOX_USER, name: "you", real_name: "You" });

    mkdirSync(dirname(options.logPath), { recursive: true });
    const logFile = createWriteStream(options.logPath, { flags: "w" });
    // A line logged while everything closes must not crash the sandbox.
    logFile.on("error", () => undefined);
    started.push({ close: () => new Promise((resolve) => logFile.end(resolve)) });
    // A fresh secret per session: only this process can sign requests the bot accepts.
    const signingSecret = randomBytes(16).toString("hex");
    const env = {
      SLACK_BOT_TOKEN: "xoxb-sandbox-bot-token",
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.apiUrl,
      PORT: "0",
      ASSISTANT_API_URL: sim.url,
      ASSISTANT_API_TOKEN: "sandbox-service-token",
      ASSISTANT_ID: "sandbox-assistant",
      LOG_LEVEL: options.logLevel ?? "info",
      // The thread view draws edited replies (status line, [Stop]); it does not draw a native
      // stream's task cards yet, so the sandbox shows the edited path.
      SLACK_STREAMING: "off",
    };
    let graceMs = 1_000;
    const bots: Bots = options.replicas
      ? replicaBots(
          await startReplicaBots({
            ...options.replicas,
            env,
            signingSecret,
            log: (line) => logFile.write(`${line}\n`),
            team: slack.teamId,
            channel: SANDBOX_CHANNEL,
          }),
          slack.teamId,
        )
      : await inProcessBot(
          { ...env, DATABASE_PATH: join(dataDir, "sandbox.db") },
          logFile,
          slack.teamId,
        );
    started.push({ close: () => bots.close(graceMs) });

    const post = async (kind: RequestKind, payload: Payload, messageTs?: string) => {
      const response = await bots.post(kind, payload, messageTs);
      if (response.status !== 200) {
        throw new Error(`the bot answered HTTP ${response.status} to a ${kind} request`);
      }
      return response;
    };
    let threadTs: string | undefined;

    return {
      slack,
      sim,
      replicas: bots.replicas,
      channel: SANDBOX_CHANNEL,
      user: SANDBOX_USER,
      get threadTs() {
        return threadTs;
      },
      async say(typed) {
        const ts = nextTs();
        // Slack's client escapes these three in message text; the bot decodes them.
        const text = typed.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
        const base = { channel: SANDBOX_CHANNEL, user: SANDBOX_USER, ts };
        if (threadTs === undefined) {
          // Slack delivers the mention as `<@BOT>` in the text; the bot strips it.
          const mention = `<@${slack.botUserId}> ${text}`;
          slack.seedMessage({ ...base, text: mention });
          threadTs = ts;
          await post("event", appMention({ ...base, text: mention }), ts);
        } else {
          const inThread = { ...base, text, thread_ts: threadTs };
          slack.seedMessage(inThread);
          await post("event", messageEvent({ ...inThread, channel_type: "channel" }), ts);
        }
        return ts;
      },
      async command(text) {
        const response = await post(
          "command",
          slashCommand({
            text,
            user_id: SANDBOX_USER,
            user_name: "you",
            channel_id: SANDBOX_CHANNEL,
            channel_name: "sandbox",
            response_url: slack.responseUrl(),
          }),
        );
        const ack = response.json as { text?: unknown } | undefined;
        return typeof ack?.text === "string" ? ack.text : undefined;
      },
      async pressStop(turnId, messageTs) {
        await post(
          "action",
          blockAction({
            user: SANDBOX_USER,
            channel: SANDBOX_CHANNEL,
            message_ts: messageTs,
            ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
            action_id: "stop_run",
            value: turnId,
            response_url: slack.responseUrl(),
          }),
        );
      },
      turnFor: async (messageTs) =>
        closing ? undefined : bots.turnFor(SANDBOX_CHANNEL, messageTs),
      idle: () => bots.idle(),
      async close(grace = 1_000) {
        graceMs = grace;
        await closeAll();
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The bot side of the workspace: one bot in this process, or replicas. */
interface Bots {
  post(kind: RequestKind, payload: Payload, messageTs?: string): Promise<BotResponse>;
  turnFor(channel: string, messageTs: string): Promise<Turn | undefined>;
  idle(): Promise<void>;
  replicas: ReplicaView | undefined;
  close(graceMs: number): Promise<void>;
}

async function inProcessBot(
  env: Record<string, string>,
  logFile: NodeJS.WritableStream,
  team: string,
): Promise<Bots> {
  const config = loadConfig(env);
  const logger = createLogger({
    level: config.logLevel,
    secrets: configuredSecrets(config),
    pretty: true,
    destination: logFile,
  });
  const bot = await createBot(config, logger);
  const { port } = await bot.start();
  const endpoint = `http://127.0.0.1:${port}/slack/events`;
  const secret = env.SLACK_SIGNING_SECRET ?? "";
  return {
    post: (kind, payload) => postToBot(endpoint, secret, kind, payload),
    turnFor: (channel, ts) => bot.stores.turns.byMessage(team, channel, ts),
    idle: () => bot.bridge.idle(),
    replicas: undefined,
    close: (graceMs) => bot.stop(graceMs),
  };
}

function replicaBots(bots: ReplicaBots, team: string): Bots {
  return {
    post: (kind, payload, messageTs) => bots.post(kind, payload, messageTs),
    turnFor: (channel, ts) => bots.turnFor(team, channel, ts),
    idle: () => bots.idle(),
    replicas: bots.view,
    close: (graceMs) => bots.close(graceMs),
  };
}
