/**
 * The bot as a real child process (`node --import tsx src/main.ts`), for the faults that
 * only a process can suffer: SIGKILL in the middle of an answer, SIGTERM, a start that
 * fails. The test keeps the fake Slack and the simulator in its own process and points the
 * child at them (or at a fault proxy in front of them) through the environment. The child
 * logs JSON lines on stdout; its port is read from the "assistant bridge started" line.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { FakeSlack } from "../../tools/fake-slack/server.js";
import {
  appMention,
  type BotResponse,
  eventEnvelope,
  type Payload,
  type PostOptions,
  postToBot,
} from "../../tools/slack-requests.js";

export const CHILD_SIGNING_SECRET = "child-signing-secret";
export const CHILD_BOT_TOKEN = "xoxb-child-bot-token-321";
export const CHILD_SERVICE_TOKEN = "child-service-token-654";
export const CHILD_ASSISTANT_ID = "asst-child";
/**
 * The longest a child may take to start, ms. A child compiles the bot through tsx as it
 * starts: a second on a quiet machine, but tens of seconds on two cores busy with the rest of
 * the suite. Only a start that fails waits this long.
 */
export const CHILD_START_MS = 60_000;

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MAIN = join(ROOT, "src", "main.ts");
/** tsx's loader by absolute URL: the child runs in an empty folder (no `.env` is read there). */
const TSX = pathToFileURL(createRequire(join(ROOT, "package.json")).resolve("tsx")).href;

export interface ChildBotEnv {
  slackApiUrl: string;
  serviceUrl: string;
  databasePath: string;
  /** Extra or overriding variables (limits, LOG_LEVEL, …). */
  extra?: Record<string, string>;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildBot {
  pid: number;
  /** `http://127.0.0.1:<port>`: Slack requests go to `<url>/slack/events`. */
  url: string;
  /** Every stdout line (JSON log lines). */
  logs: string[];
  /** Everything written on stderr. */
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  post(
    kind: "event" | "command" | "action",
    payload: Payload,
    opts?: PostOptions,
  ): Promise<BotResponse>;
  /** Resolves once a log line matches; rejects after `timeoutMs` (default 30 s) or on exit. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends the signal and resolves when the process has exited. */
  kill(signal: NodeJS.Signals): Promise<Exit>;
}

/** The environment of a child bot in HTTP mode, on a free port, logging at debug. */
export function childEnv(options: ChildBotEnv): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    // The test run's temp folder (see temp-folder-guard.ts), so what the child leaves is seen.
    ...(process.env.TMPDIR === undefined ? {} : { TMPDIR: process.env.TMPDIR }),
    SLACK_BOT_TOKEN: CHILD_BOT_TOKEN,
    SLACK_SIGNING_SECRET: CHILD_SIGNING_SECRET,
    SLACK_API_URL: options.slackApiUrl,
    PORT: "0",
    ASSISTANT_API_URL: options.serviceUrl,
    ASSISTANT_API_TOKEN: CHILD_SERVICE_TOKEN,
    ASSISTANT_ID: CHILD_ASSISTANT_ID,
    DATABASE_PATH: options.databasePath,
    LOG_LEVEL: "debug",
    // Replies are edited unless a test turns streaming on (SLACK_STREAMING=auto).
    SLACK_STREAMING: "off",
    ...options.extra,
  };
}

/**
 * Starts the child and resolves once it listens. Rejects with its stderr when it exits
 * before that (use `spawnChildBot` to look at a start that is meant to fail).
 */
export async function startChildBot(env: Record<string, string>): Promise<ChildBot> {
  const child = spawnChildBot(env);
  const started = await Promise.race([
    child.waitForLog(/"msg":"assistant bridge started"/, CHILD_START_MS),
    child.exited.then((exit) => {
      throw new Error(`the bot exited at start (${JSON.stringify(exit)}): ${child.stderr()}`);
    }),
  ]);
  const port = (JSON.parse(started) as { port?: unknown }).port;
  if (typeof port !== "number") throw new Error(`no port in the start line: ${started}`);
  child.url = `http://127.0.0.1:${port}`;
  return child;
}

/** Spawns the child without waiting for it to listen (`url` is empty until then). */
export function spawnChildBot(env: Record<string, string>): ChildBot {
  // An empty working folder (no `.env` there), removed once the process has exited.
  const cwd = mkdtempSync(join(tmpdir(), "child-bot-"));
  const proc: ChildProcess = spawn(process.execPath, ["--import", TSX, MAIN], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  let stderr = "";
  const listeners = new Set<() => void>();
  let partial = "";
  proc.stdout?.setEncoding("utf8");
  proc.stdout?.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) logs.push(line);
    for (const listener of [...listeners]) listener();
  });
  proc.stderr?.setEncoding("utf8");
  proc.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) => {
    proc.on("exit", (code, signal) => {
      rmSync(cwd, { recursive: true, force: true });
      exit = { code, signal };
      for (const listener of [...listeners]) listener();
      resolve(exit);
    });
  });

  const bot: ChildBot = {
    pid: proc.pid ?? -1,
    url: "",
    logs,
    stderr: () => stderr,
    exited,
    post: (kind, payload, opts) =>
      postToBot(`${bot.url}/slack/events`, CHILD_SIGNING_SECRET, kind, payload, opts),
    waitForLog(pattern, timeoutMs = 30_000) {
      return new Promise<string>((resolve, reject) => {
        const check = () => {
          const line = logs.find((l) => pattern.test(l));
          if (line !== undefined) finish(() => resolve(line));
          else if (exit) {
            const said = `${JSON.stringify(exit)}: ${stderr.slice(-2_000)}`;
            finish(() => reject(new Error(`the bot exited waiting for ${pattern} (${said})`)));
          }
        };
        const timer = setTimeout(
          () =>
            finish(() => reject(new Error(`no log line matched ${pattern} in ${timeoutMs} ms`))),
          timeoutMs,
        );
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      });
    },
    async kill(signal) {
      if (!exit) proc.kill(signal);
      return exited;
    },
  };
  return bot;
}

/**
 * A person @mentions the bot in a channel: the message is seeded in the fake Slack (for
 * thread context) and the event posted to the child. `eventId` lets a test repeat it as a
 * Slack retry.
 */
export async function mentionChild(
  bot: ChildBot,
  slack: Pick<FakeSlack, "nextTs" | "seedMessage">,
  fields: { text: string; channel: string; user: string; eventId?: string },
): Promise<{ ts: string; event: Payload; response: BotResponse }> {
  // From the fake Slack's own counter: the clock alone could give the ts of a bot post made
  // in the same millisecond.
  const ts = slack.nextTs();
  slack.seedMessage({ channel: fields.channel, ts, user: fields.user, text: fields.text });
  const event = eventEnvelope(
    appMention({ channel: fields.channel, user: fields.user, text: fields.text, ts }),
    fields.eventId === undefined ? {} : { eventId: fields.eventId },
  );
  const response = await bot.post("event", event);
  return { ts, event, response };
}
