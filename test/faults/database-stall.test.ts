/**
 * Issue #21's liveness, from outside the process.
 *
 * PostgreSQL stalls for 8 s behind a proxy (a failover, a lock storm, a saturated link) while
 * answers are being written: the bot stays alive for its orchestrator, says it is not ready,
 * keeps showing what needs no record, acknowledges no question it cannot record, and once the
 * database answers again every question is answered once, exactly.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, mentionChild, startChildBot } from "../support/child-bot.js";
import { testDatabase } from "../support/postgres.js";
import { type StallProxy, startStallProxy } from "../support/tcp-stall-proxy.js";

const CHANNEL = "C0STALL";
const USER = "U0ALICE";
const STALL_MS = 8_000;

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

/** GET `path` on the bot; the status, or 0 when no answer came within `withinMs`. */
async function probe(path: string, withinMs = 1_000): Promise<number> {
  const response = await fetch(`${bot?.url}${path}`, { signal: AbortSignal.timeout(withinMs) })
    .then((r) => r.status)
    .catch(() => 0);
  return response;
}

const shown = (ts: string) => slack.threadTranscript(CHANNEL, ts).join("\n");

describe("PostgreSQL stalled for eight seconds", () => {
  it("keeps /healthz answering and the answers moving, refuses what it cannot record, and loses nothing", async () => {
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
    // Three answers written slowly enough to span the stall.
    const answers = [1, 2, 3].map((n) =>
      Array.from({ length: 40 }, (_, i) => `Answer ${n}, line ${i + 1}.`).join("\n"),
    );
    for (const text of answers) sim.control.enqueueAnswer({ text, tokensPerSecond: 25 });
    const asked: string[] = [];
    for (const n of [1, 2, 3]) {
      const { ts, response } = await mentionChild(bot, (m) => slack.seedMessage(m), {
        text: `<@UBOT> question ${n}`,
        channel: CHANNEL,
        user: USER,
      });
      expect(response.status).toBe(200);
      asked.push(ts);
    }
    await slack.waitFor(() => asked.every((ts) => shown(ts).includes("line 1.")), 30_000);

    proxy.stall();
    const before = asked.map((ts) => shown(ts).length);
    const stalledAt = Date.now();
    const health: number[] = [];
    const ready: number[] = [];
    // A question that arrives meanwhile cannot be recorded: it must not be acknowledged.
    sim.control.enqueueAnswer({ text: "Answered after the stall." });
    const lateSent = Date.now();
    const late = mentionChild(bot, (m) => slack.seedMessage(m), {
      text: "<@UBOT> are you there?",
      channel: CHANNEL,
      user: USER,
    }).then((sent) => ({ ...sent, tookMs: Date.now() - lateSent }));
    // Settled by the assertions below; a failure before them must not leave it unhandled.
    late.catch(() => undefined);
    while (Date.now() - stalledAt < STALL_MS) {
      health.push(await probe("/healthz"));
      if (Date.now() - stalledAt > 3_000) ready.push(await probe("/readyz", 2_000));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const during = asked.map((ts) => shown(ts).length);
    proxy.resume();

    expect(health.length).toBeGreaterThanOrEqual(8);
    expect(health.every((status) => status === 200)).toBe(true);
    expect(ready.length).toBeGreaterThan(0);
    expect(ready).toEqual(ready.map(() => 503));
    // The answers went on showing text the service wrote while the database was away.
    expect(during.some((length, i) => length > (before[i] ?? 0))).toBe(true);
    // Not acknowledged within Slack's 3 s (refused, or answered too late to count).
    const { event, response, ts: lateTs, tookMs } = await late;
    expect(response.status !== 200 || tookMs > 3_000).toBe(true);

    // Slack delivers the unacknowledged question again: answered once, like the rest.
    const again = await bot.post("event", event, { retryNum: 1, retryReason: "http_error" });
    expect(again.status).toBe(200);
    const done = (ts: string) => {
      const replies = slack.replies(CHANNEL, ts);
      return replies.length === 1 && !hasStopButton(replies[0] as never);
    };
    await slack.waitFor(() => [...asked, lateTs].every(done), 60_000);
    // Each question shows one whole answer, each answer once (the runs started side by side,
    // so which question got which scripted answer is the simulator's order, not the test's).
    const got = asked.map((ts) => answers.findIndex((answer) => shown(ts).includes(answer)));
    expect(got.sort()).toEqual([0, 1, 2]);
    expect(shown(lateTs)).toContain("Answered after the stall.");
    expect(sim.control.counts()).toMatchObject({ messages: 4, runs: 4 });
    expect(await probe("/readyz", 5_000)).toBe(200);
  }, 120_000);
});
