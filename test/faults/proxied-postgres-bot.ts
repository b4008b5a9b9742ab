/**
 * One bot in a child process on PostgreSQL reached through a proxy that can stall or cut the
 * database (tcp-stall-proxy.ts), over a fresh simulator and fake Slack, with answers being
 * written slowly: the set-up of the tests of a database in trouble (database-stall.test.ts,
 * database-outage.test.ts), whose files call proxiedBotPerTest.
 */
import { afterEach, beforeEach, expect } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, mentionChild, startChildBot } from "../support/child-bot.js";
import { testDatabase } from "../support/postgres.js";
import { type StallProxy, startStallProxy } from "../support/tcp-stall-proxy.js";

export const CHANNEL = "C0DBAWAY";
export const USER = "U0ALICE";

export let sim: RunningSimulator;
export let slack: FakeSlack;
export let proxy: StallProxy | undefined;
export let bot: ChildBot | undefined;

/** Fresh services for each test of the file that calls it; the bot and the proxy ended after. */
export function proxiedBotPerTest(): void {
  beforeEach(async () => {
    sim = await startSimulator({ queueDelayMs: 10 });
    slack = await startFakeSlack();
  });
  afterEach(async () => {
    proxy?.resume();
    await bot?.kill("SIGKILL");
    bot = undefined;
    await proxy?.close();
    proxy = undefined;
    await slack.close();
    await sim.close();
  });
}

/** Starts the proxy in front of the test's database, and the bot behind it. */
export async function startBehindProxy(): Promise<{ bot: ChildBot; proxy: StallProxy }> {
  const direct = new URL(await testDatabase());
  proxy = await startStallProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const proxied = new URL(direct);
  proxied.host = proxy.address;
  bot = await startChildBot(
    childEnv({
      slackApiUrl: slack.apiUrl,
      serviceUrl: sim.url,
      databasePath: "/nonexistent/unused.db",
      extra: { DATABASE_URL: proxied.toString(), LOG_LEVEL: "info" },
    }),
  );
  return { bot, proxy };
}

/** GET `path` on the bot: its status, or 0 when no answer came within `withinMs`. */
export function probe(path: string, withinMs = 1_000): Promise<number> {
  return fetch(`${bot?.url}${path}`, { signal: AbortSignal.timeout(withinMs) })
    .then((r) => r.status)
    .catch(() => 0);
}

/** What the thread of `ts` shows, its replies one line each. */
export const shown = (ts: string) => slack.threadTranscript(CHANNEL, ts).join("\n");

/**
 * Asks `count` questions whose answers, `lines` lines each, are written slowly enough to span
 * what the test does to the database; resolves with their ts and answers once every answer
 * shows its first line.
 */
export async function askSlowly(
  child: ChildBot,
  count: number,
  lines: number,
): Promise<{ asked: string[]; answers: string[] }> {
  const answers = Array.from({ length: count }, (_, q) =>
    Array.from({ length: lines }, (_, i) => `Answer ${q + 1}, line ${i + 1}.`).join("\n"),
  );
  for (const text of answers) sim.control.enqueueAnswer({ text, tokensPerSecond: 25 });
  const asked: string[] = [];
  for (let n = 1; n <= count; n++) {
    const { ts, response } = await mentionChild(child, slack, {
      text: `<@UBOT> question ${n}`,
      channel: CHANNEL,
      user: USER,
    });
    expect(response.status).toBe(200);
    asked.push(ts);
  }
  await slack.waitFor(() => asked.every((ts) => shown(ts).includes("line 1.")), 30_000);
  return { asked, answers };
}

/**
 * A question asked while the database is away: its event, its ts, Slack's answer and how long
 * that took (settled by the caller's assertions).
 */
export function askMeanwhile(child: ChildBot, text: string) {
  const sent = Date.now();
  const late = mentionChild(child, slack, {
    text,
    channel: CHANNEL,
    user: USER,
  }).then((answer) => ({ ...answer, tookMs: Date.now() - sent }));
  late.catch(() => undefined);
  return late;
}

/** Every one of `threads` has one reply, with no Stop button left. */
export function allDone(threads: string[]): Promise<void> {
  const done = (ts: string) => {
    const replies = slack.replies(CHANNEL, ts);
    return replies.length === 1 && !hasStopButton(replies[0] as never);
  };
  return slack.waitFor(() => threads.every(done), 90_000);
}

/** Each question shows one whole answer, each answer once (in whichever order runs started). */
export function eachAnsweredOnce(asked: string[], answers: string[]): void {
  const got = asked.map((ts) => answers.findIndex((answer) => shown(ts).includes(answer)));
  expect(got.sort()).toEqual(answers.map((_, i) => i));
}
