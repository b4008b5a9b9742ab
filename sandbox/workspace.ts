/**
 * A local workspace for trying the bot: the project's service simulator, the fake Slack
 * Web API, and the real bot (HTTP mode) between them, all on 127.0.0.1. The person's
 * messages reach the bot exactly as Slack's would: signed Events API requests to its
 * receiver, with the message also stored in the fake so the thread reads like Slack's.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Bot, createBot } from "../src/bot.js";
import { configuredSecrets, type LogLevel, loadConfig } from "../src/config.js";
import { type FakeSlack, startFakeSlack } from "../src/devtools/fake-slack/server.js";
import {
  appMention,
  blockAction,
  messageEvent,
  nextTs,
  type Payload,
  postToBot,
  type RequestKind,
  slashCommand,
} from "../src/devtools/slack-requests.js";
import { createLogger } from "../src/logger.js";
import type { ScriptedAnswer } from "../src/simulator/answers.js";
import {
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from "../src/simulator/server.js";
import type { Turn } from "../src/store/turn.js";

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
}

export interface Workspace {
  readonly slack: FakeSlack;
  readonly sim: RunningSimulator;
  readonly bot: Bot;
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
  turnFor(messageTs: string): Turn | undefined;
  /** Stops the bot (giving answers `graceMs` to finish), the fake Slack and the simulator. */
  close(graceMs?: number): Promise<void>;
}

export async function startWorkspace(options: WorkspaceOptions): Promise<Workspace> {
  const started: { close(): Promise<unknown> }[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), "bridge-sandbox-"));
  let closing: Promise<void> | undefined;
  const closeAll = () => {
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
    const config = loadConfig({
      SLACK_BOT_TOKEN: "xoxb-sandbox-bot-token",
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.apiUrl,
      PORT: "0",
      ASSISTANT_API_URL: sim.url,
      ASSISTANT_API_TOKEN: "sandbox-service-token",
      ASSISTANT_ID: "sandbox-assistant",
      DATABASE_PATH: join(dataDir, "sandbox.db"),
      LOG_LEVEL: options.logLevel ?? "info",
      // The thread view draws edited replies (status line, [Stop]); it does not draw a native
      // stream's task cards yet, so the sandbox shows the edited path.
      SLACK_STREAMING: "off",
    });
    const logger = createLogger({
      level: config.logLevel,
      secrets: configuredSecrets(config),
      pretty: true,
      destination: logFile,
    });
    const bot = createBot(config, logger);
    const { port } = await bot.start();
    let graceMs = 1_000;
    started.push({ close: () => bot.stop(graceMs) });
    const { turns } = bot.stores;
    const endpoint = `http://127.0.0.1:${port}/slack/events`;

    const post = async (kind: RequestKind, payload: Payload) => {
      const response = await postToBot(endpoint, signingSecret, kind, payload);
      if (response.status !== 200) {
        throw new Error(`the bot answered HTTP ${response.status} to a ${kind} request`);
      }
      return response;
    };
    let threadTs: string | undefined;

    return {
      slack,
      sim,
      bot,
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
          await post("event", appMention({ ...base, text: mention }));
        } else {
          const inThread = { ...base, text, thread_ts: threadTs };
          slack.seedMessage(inThread);
          await post("event", messageEvent({ ...inThread, channel_type: "channel" }));
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
      turnFor: (messageTs) =>
        closing ? undefined : turns.byMessage(slack.teamId, SANDBOX_CHANNEL, messageTs),
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
