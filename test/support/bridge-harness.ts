/**
 * The whole bot as it runs in production, wired to the fake Slack and the project's
 * simulator over real HTTP on 127.0.0.1: the real Bolt app (HTTP mode, signed requests, or
 * Socket Mode), the real SQLite file, the real service client. Tests drive it as Slack
 * would and look at what Slack and the service saw.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";
import { type Bot, createBot } from "../../src/bot.js";
import { configuredSecrets, loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { type Clock, systemClock } from "../../src/time.js";
import {
  type FakeSlack,
  type FakeSlackOptions,
  startFakeSlack,
} from "../../tools/fake-slack/server.js";
import {
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from "../../tools/simulator/server.js";
import {
  appMention,
  type BotResponse,
  blockAction,
  eventEnvelope,
  messageEvent,
  type Payload,
  type PostOptions,
  postToBot,
  slashCommand,
} from "../../tools/slack-requests.js";

export const SIGNING_SECRET = "test-signing-secret";
export const BOT_TOKEN = "xoxb-test-bot-token-123";
export const APP_TOKEN = "xapp-1-test-app-token-456";
export const SERVICE_TOKEN = "service-token-789";
export const ASSISTANT_ID = "asst-e2e";

export interface HarnessOptions {
  simulator?: SimulatorOptions;
  slack?: FakeSlackOptions;
  /** Extra or overriding environment variables for the bot. */
  env?: Record<string, string>;
  socketMode?: boolean;
  /** The bot's clock; default the system's. */
  clock?: Clock;
}

export interface Harness {
  slack: FakeSlack;
  sim: RunningSimulator;
  bot: Bot;
  /** `http://127.0.0.1:<port>` of the bot (HTTP mode: Slack requests, health, metrics). */
  botUrl: string;
  /** `http://127.0.0.1:<port>` of the ops routes (the same as botUrl unless OPS_PORT moves them). */
  opsUrl: string;
  databasePath: string;
  /** Every log line the bot wrote, as JSON text. */
  logs: string[];
  /** A signed Events API / command / action request, as Slack sends it. */
  post(
    kind: "event" | "command" | "action",
    payload: Payload,
    opts?: PostOptions,
  ): Promise<BotResponse>;
  /**
   * A person @mentions the bot in a channel (a signed request, or over the socket in Socket
   * Mode); resolves with the message's ts once acknowledged.
   */
  mention(
    text: string,
    fields?: {
      channel?: string;
      user?: string;
      thread_ts?: string;
      files?: unknown[];
      /** The writer's own workspace, in a Slack Connect channel. */
      userTeam?: string;
    },
  ): Promise<{ ts: string; threadTs: string; response: BotResponse }>;
  /** A plain `message` event (channel reply or DM), delivered as `mention` is. */
  message(fields: {
    text: string;
    channel?: string;
    user?: string;
    thread_ts?: string;
    channel_type?: "im" | "channel";
    subtype?: string;
    bot_id?: string;
    files?: unknown[];
    /** The writer's own workspace, in a Slack Connect channel. */
    userTeam?: string;
  }): Promise<{ ts: string; threadTs: string; response: BotResponse }>;
  /** `/assistant <text>`; resolves with the acknowledgement's body. */
  command(
    text: string,
    fields?: { channel?: string; user?: string; team?: string },
  ): Promise<BotResponse>;
  /**
   * An Events API event (the inner `event`) delivered as Slack would in this harness's mode:
   * a signed request to /slack/events, or an envelope over the socket; resolves once the bot
   * acknowledged it.
   */
  deliver(event: Payload): Promise<void>;
  /** Presses the Stop button of a reply. */
  pressStop(fields: {
    turnId: string;
    user: string;
    channel?: string;
    messageTs: string;
  }): Promise<BotResponse>;
  /**
   * Resolves once the thread's last bot reply shows no Stop button (the turn ended); fails
   * after `timeoutMs` (default 30 s: a bound for a machine busy with the whole suite, where a
   * test of four answers was seen to need more than 10).
   */
  settled(channel: string, threadTs: string, count?: number, timeoutMs?: number): Promise<string[]>;
  /** Requests the service saw, by method and path pattern. */
  serviceRequests(method: string, path: RegExp): { body: unknown; path: string }[];
  /** Stops the bot (not the fakes) and starts a new one on the same database. */
  /** Stops the bot and starts it again on the same database (with more env, another clock). */
  restart(env?: Record<string, string>, clock?: Clock): Promise<void>;
  close(): Promise<void>;
}

export const CHANNEL = "C0GENERAL";
export const USER = "U0ALICE";

function captureLogs(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(line);
      done();
    },
  });
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const sim = await startSimulator({
    queueDelayMs: 10,
    answer: { tokensPerSecond: 400 },
    ...options.simulator,
  });
  const slack = await startFakeSlack({
    socketMode: options.socketMode ?? false,
    ...options.slack,
  }).catch(async (error: unknown) => {
    await sim.close();
    throw error;
  });
  const databasePath = join(mkdtempSync(join(tmpdir(), "bridge-e2e-")), "bridge.db");
  /** The fakes and the database folder; runs once, whether the bot started or not. */
  const closeFakes = async () => {
    try {
      await slack.close();
      await sim.close();
    } finally {
      rmSync(dirname(databasePath), { recursive: true, force: true });
    }
  };
  const logs: string[] = [];
  let extraEnv = options.env ?? {};
  let clock = options.clock ?? systemClock;

  const launch = async (): Promise<{ bot: Bot; botUrl: string; opsUrl: string }> => {
    const env: Record<string, string> = {
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.apiUrl,
      PORT: "0",
      ASSISTANT_API_URL: sim.url,
      ASSISTANT_API_TOKEN: SERVICE_TOKEN,
      ASSISTANT_ID,
      DATABASE_PATH: databasePath,
      LOG_LEVEL: "debug",
      // Replies are edited unless a test turns streaming on (SLACK_STREAMING=auto).
      SLACK_STREAMING: "off",
      ...(options.socketMode ? { SLACK_APP_TOKEN: APP_TOKEN } : {}),
      ...extraEnv,
    };
    const config = loadConfig(env);
    const logger = createLogger({
      level: config.logLevel,
      secrets: configuredSecrets(config),
      destination: captureLogs(logs),
    });
    const bot = await createBot(config, logger, clock);
    try {
      const { port, opsPort } = await bot.start();
      return { bot, botUrl: `http://127.0.0.1:${port}`, opsUrl: `http://127.0.0.1:${opsPort}` };
    } catch (error) {
      // A start that failed still opened the database and maybe a listener.
      await bot.stop(0).catch(() => {});
      throw error;
    }
  };

  let { bot, botUrl, opsUrl } = await launch().catch(async (error: unknown) => {
    await closeFakes();
    throw error;
  });
  /** False between a restart's stop and its start, so close does not stop a bot twice. */
  let running = true;
  let closing: Promise<void> | undefined;

  /**
   * An event as Slack delivers it in this mode: a signed request, or an envelope over the
   * socket (then the acknowledgement stands for the response: 200, its payload as `json`).
   */
  const sendEvent = async (event: Payload): Promise<BotResponse> => {
    if (!options.socketMode) return harness.post("event", event);
    const started = performance.now();
    const ack = await slack.socket.send("events_api", eventEnvelope(event));
    return { status: 200, body: "", json: ack.payload, ms: performance.now() - started };
  };

  const harness: Harness = {
    slack,
    sim,
    get bot() {
      return bot;
    },
    get botUrl() {
      return botUrl;
    },
    get opsUrl() {
      return opsUrl;
    },
    databasePath,
    logs,
    post: (kind, payload, opts) =>
      postToBot(`${botUrl}/slack/events`, SIGNING_SECRET, kind, payload, opts),
    async mention(text, fields = {}) {
      const ts = slack.nextTs();
      const channel = fields.channel ?? CHANNEL;
      const user = fields.user ?? USER;
      slack.seedMessage({
        channel,
        ts,
        user,
        text,
        ...(fields.thread_ts ? { thread_ts: fields.thread_ts } : {}),
        ...(fields.userTeam ? { user_team: fields.userTeam } : {}),
        ...(fields.files ? { files: fields.files } : {}),
      });
      const event = appMention({
        channel,
        user,
        text,
        ts,
        ...(fields.thread_ts ? { thread_ts: fields.thread_ts } : {}),
        ...(fields.files ? { files: fields.files } : {}),
        ...(fields.userTeam ? { userTeam: fields.userTeam } : {}),
      });
      const response = await sendEvent(event);
      return { ts, threadTs: fields.thread_ts ?? ts, response };
    },
    async message(fields) {
      const ts = slack.nextTs();
      const channel = fields.channel ?? CHANNEL;
      const user = fields.user ?? USER;
      slack.seedMessage({
        channel,
        ts,
        user,
        text: fields.text,
        ...(fields.thread_ts ? { thread_ts: fields.thread_ts } : {}),
        ...(fields.userTeam ? { user_team: fields.userTeam } : {}),
        ...(fields.files ? { files: fields.files } : {}),
      });
      const event = messageEvent({
        channel,
        user,
        text: fields.text,
        ts,
        channel_type: fields.channel_type ?? "channel",
        ...(fields.thread_ts ? { thread_ts: fields.thread_ts } : {}),
        ...(fields.subtype ? { subtype: fields.subtype } : {}),
        ...(fields.bot_id ? { bot_id: fields.bot_id } : {}),
        ...(fields.files ? { files: fields.files } : {}),
        ...(fields.userTeam ? { userTeam: fields.userTeam } : {}),
      });
      const response = await sendEvent(event);
      return { ts, threadTs: fields.thread_ts ?? ts, response };
    },
    command(text, fields = {}) {
      return harness.post(
        "command",
        slashCommand({
          text,
          user_id: fields.user ?? USER,
          channel_id: fields.channel ?? CHANNEL,
          ...(fields.team ? { team_id: fields.team } : {}),
          response_url: slack.responseUrl(),
        }),
      );
    },
    async deliver(event) {
      if (options.socketMode) {
        await slack.socket.send("events_api", eventEnvelope(event));
        return;
      }
      const response = await harness.post("event", event);
      if (response.status !== 200) throw new Error(`the bot answered ${response.status}`);
    },
    pressStop(fields) {
      return harness.post(
        "action",
        blockAction({
          user: fields.user,
          channel: fields.channel ?? CHANNEL,
          message_ts: fields.messageTs,
          action_id: "stop_run",
          value: fields.turnId,
          response_url: slack.responseUrl(),
        }),
      );
    },
    async settled(channel, threadTs, count = 1, timeoutMs = 30_000) {
      await slack.waitFor((s) => {
        const replies = s.replies(channel, threadTs);
        return replies.length >= count && replies.every((m) => !hasStopButton(m));
      }, timeoutMs);
      await bot.bridge.idle();
      return slack.threadTranscript(channel, threadTs);
    },
    serviceRequests(method, path) {
      return sim.control.requests
        .filter((r) => r.method === method && path.test(r.path))
        .map((r) => ({ body: r.body, path: r.path }));
    },
    async restart(env, nextClock) {
      running = false;
      await bot.stop(2_000);
      if (env) extraEnv = { ...extraEnv, ...env };
      if (nextClock) clock = nextClock;
      ({ bot, botUrl, opsUrl } = await launch());
      running = true;
    },
    close() {
      closing ??= (async () => {
        try {
          if (running) await bot.stop(1_000);
        } finally {
          await closeFakes();
        }
      })();
      return closing;
    },
  };
  return harness;
}

/** Whether a stored Slack message still carries an interactive Stop button. */
export function hasStopButton(message: { blocks?: unknown }): boolean {
  return JSON.stringify(message.blocks ?? []).includes('"stop_run"');
}

/** The turn id on a reply's Stop button, or undefined. */
export function stopTurnId(message: { blocks?: unknown }): string | undefined {
  const blocks = (message.blocks ?? []) as {
    type?: string;
    elements?: { action_id?: string; value?: string }[];
  }[];
  for (const block of blocks) {
    for (const element of block.elements ?? []) {
      if (element.action_id === "stop_run") return element.value;
    }
  }
  return undefined;
}
