/**
 * One bot in a child process over a fresh simulator and fake Slack, killed and started again
 * on its SQLite file, for the crash tests (crash-recovery*.test.ts), whose files call
 * crashBotPerTest.
 */
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, startChildBot } from "../support/child-bot.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { tempFolder } from "../support/temp-folder.js";

export const CHANNEL = "C0CRASH";
export const USER = "U0ALICE";
export const ANSWER = Array.from(
  { length: 8 },
  (_, i) => `${i + 1}. Line ${i + 1} of an answer that takes a while to write.`,
).join("\n");

export let sim: RunningSimulator;
export let slack: FakeSlack;
export let databasePath: string;
const children: ChildBot[] = [];
const proxies: FaultProxy[] = [];

/**
 * A fresh simulator, fake Slack and database file for each test of the file that calls it
 * (at its top level), and every child bot and proxy killed after. Called by each file: with
 * the module loaded once per worker, hooks registered here at import would serve only the
 * first file to import it.
 */
export function crashBotPerTest(): void {
  beforeEach(async () => {
    sim = await startSimulator({ queueDelayMs: 10, answer: { tokensPerSecond: 60 } });
    slack = await startFakeSlack();
    databasePath = join(tempFolder("faults-crash-"), "bridge.db");
  });

  afterEach(async () => {
    for (const child of children.splice(0)) await child.kill("SIGKILL");
    for (const proxy of proxies.splice(0)) await proxy.close();
    await slack.close();
    await sim.close();
  });
}

export async function launch(
  urls: { slack?: string; service?: string } = {},
  extra: Record<string, string> = {},
): Promise<ChildBot> {
  const child = await startChildBot(
    childEnv({
      slackApiUrl: urls.slack ?? slack.apiUrl,
      serviceUrl: urls.service ?? sim.url,
      databasePath,
      extra,
    }),
  );
  children.push(child);
  return child;
}

export async function proxy(target: string): Promise<FaultProxy> {
  const p = await startFaultProxy(target);
  proxies.push(p);
  return p;
}

/** The thread's bot replies, once none of them carries a Stop button any more. */
export async function settled(threadTs: string, timeoutMs = 30_000): Promise<string[]> {
  await slack.waitFor((s) => {
    const replies = s.replies(CHANNEL, threadTs);
    return replies.length > 0 && replies.every((m) => !hasStopButton(m));
  }, timeoutMs);
  return slack.threadTranscript(CHANNEL, threadTs);
}

export const posts = () =>
  sim.control.requests.filter((r) => r.method === "POST" && /\/messages$/.test(r.path));
/** The bot reads the run's stream only once it has recorded the run's id. */
export const runFollowed = () =>
  sim.control.requests.some((r) => r.method === "GET" && /\/stream$/.test(r.path));
/**
 * Resolves once `holds()` is true, checked at each request the simulator records: the fake
 * Slack's waitFor re-checks only on Slack's own activity, and none may follow.
 */
export function serviceUntil(holds: () => boolean, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const events = sim.control.events;
    const check = () => {
      if (!holds()) return;
      done();
      resolve();
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the simulator did not see it within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      events.off("request", check);
    };
    events.on("request", check);
    check();
  });
}
export const runStarts = () =>
  sim.control.requests.filter((r) => r.method === "POST" && /\/runs$/.test(r.path));
