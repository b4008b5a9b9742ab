/**
 * Issue #21's liveness, from outside the process.
 *
 * PostgreSQL stalls for 8 s behind a proxy (a failover, a lock storm, a saturated link) while
 * answers are being written: the bot stays alive for its orchestrator, says it is not ready,
 * keeps showing what needs no record, acknowledges no question it cannot record, and once the
 * database answers again every question is answered once, exactly.
 */
import { describe, expect, it } from "vitest";
import {
  allDone,
  askMeanwhile,
  askSlowly,
  eachAnsweredOnce,
  probe,
  proxiedBotPerTest,
  shown,
  sim,
  startBehindProxy,
} from "./proxied-postgres-bot.js";

const STALL_MS = 8_000;

proxiedBotPerTest();

describe("PostgreSQL stalled for eight seconds", () => {
  it("keeps /healthz answering and the answers moving, refuses what it cannot record, and loses nothing", async () => {
    const { bot, proxy } = await startBehindProxy();
    const { asked, answers } = await askSlowly(bot, 3, 40);

    proxy.stall();
    const before = asked.map((ts) => shown(ts).length);
    const stalledAt = Date.now();
    const health: number[] = [];
    const ready: number[] = [];
    // A question that arrives meanwhile cannot be recorded: it must not be acknowledged.
    sim.control.enqueueAnswer({ text: "Answered after the stall." });
    const late = askMeanwhile(bot, "<@UBOT> are you there?");
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
    await allDone([...asked, lateTs]);
    eachAnsweredOnce(asked, answers);
    expect(shown(lateTs)).toContain("Answered after the stall.");
    expect(sim.control.counts()).toMatchObject({ messages: 4, runs: 4 });
    expect(await probe("/readyz", 5_000)).toBe(200);
  }, 120_000);
});
