/**
 * Issue #21's outage, from outside the process: PostgreSQL goes away for a minute (every
 * connection ended, every new one refused, as a server that restarts or fails over) while
 * answers are being written. The bot stays alive, acknowledges no question it cannot record,
 * and once the database is back every question is answered once, exactly: nothing is lost.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, mentionChild, startChildBot } from "../support/child-bot.js";
import { testDatabase } from "../support/postgres.js";
import { type StallProxy, startStallProxy } from "../support/tcp-stall-proxy.js";

const CHANNEL = "C0OUTAGE";
const USER = "U0ALICE";
const OUTAGE_MS = Number(process.env.OUTAGE_TEST_MS ?? 60_000);

let sim: RunningSimulator;
let slack: FakeSlack;
let proxy: StallProxy | undefined;
let bot: ChildBot | undefined;

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

/** GET /healthz on the bot: its status, or 0 when no answer came within a second. */
const healthz = () =>
  fetch(`${bot?.url}/healthz`, { signal: AbortSignal.timeout(1_000) })
    .then((r) => r.status)
    .catch(() => 0);

const shown = (ts: string) => slack.threadTranscript(CHANNEL, ts).join("\n");

describe("PostgreSQL gone for a minute", () => {
  it("keeps the process up, acknowledges nothing it cannot record, and loses nothing", async () => {
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
    const answers = [1, 2].map((n) =>
      Array.from({ length: 30 }, (_, i) => `Answer ${n}, line ${i + 1}.`).join("\n"),
    );
    for (const text of answers) sim.control.enqueueAnswer({ text, tokensPerSecond: 25 });
    const asked: string[] = [];
    for (const n of [1, 2]) {
      const { ts, response } = await mentionChild(bot, (m) => slack.seedMessage(m), {
        text: `<@UBOT> question ${n}`,
        channel: CHANNEL,
        user: USER,
      });
      expect(response.status).toBe(200);
      asked.push(ts);
    }
    await slack.waitFor(() => asked.every((ts) => shown(ts).includes("line 1.")), 30_000);

    proxy.cut();
    const cutAt = Date.now();
    sim.control.enqueueAnswer({ text: "Answered after the outage." });
    const lateSent = Date.now();
    const late = mentionChild(bot, (m) => slack.seedMessage(m), {
      text: "<@UBOT> are you there?",
      channel: CHANNEL,
      user: USER,
    }).then((sent) => ({ ...sent, tookMs: Date.now() - lateSent }));
    late.catch(() => undefined);
    const health: number[] = [];
    while (Date.now() - cutAt < OUTAGE_MS) {
      health.push(await healthz());
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    proxy.resume();

    expect(health.every((status) => status === 200)).toBe(true);
    const { event, response, ts: lateTs, tookMs } = await late;
    expect(response.status !== 200 || tookMs > 3_000).toBe(true);
    // Slack delivers the unacknowledged question again: answered once, like the rest.
    const again = await bot.post("event", event, { retryNum: 1, retryReason: "http_error" });
    expect(again.status).toBe(200);
    const done = (ts: string) => {
      const replies = slack.replies(CHANNEL, ts);
      return replies.length === 1 && !hasStopButton(replies[0] as never);
    };
    await slack.waitFor(() => [...asked, lateTs].every(done), 90_000);
    const got = asked.map((ts) => answers.findIndex((answer) => shown(ts).includes(answer)));
    expect(got.sort()).toEqual([0, 1]);
    expect(shown(lateTs)).toContain("Answered after the outage.");
    expect(sim.control.counts()).toMatchObject({ messages: 3, runs: 3 });
  }, 240_000);
});
