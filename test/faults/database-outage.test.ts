/**
 * Issue #21's outage, from outside the process: PostgreSQL goes away for a minute (every
 * connection ended, every new one refused, as a server that restarts or fails over) while
 * answers are being written. The bot stays alive, acknowledges no question it cannot record,
 * and once the database is back every question is answered once, exactly: nothing is lost.
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

const OUTAGE_MS = Number(process.env.OUTAGE_TEST_MS ?? 60_000);

proxiedBotPerTest();

describe("PostgreSQL gone for a minute", () => {
  it("keeps the process up, acknowledges nothing it cannot record, and loses nothing", async () => {
    const { bot, proxy } = await startBehindProxy();
    const { asked, answers } = await askSlowly(bot, 2, 30);

    proxy.cut();
    const cutAt = Date.now();
    sim.control.enqueueAnswer({ text: "Answered after the outage." });
    const late = askMeanwhile(bot, "<@UBOT> are you there?");
    const health: number[] = [];
    while (Date.now() - cutAt < OUTAGE_MS) {
      health.push(await probe("/healthz"));
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    proxy.resume();

    expect(health.every((status) => status === 200)).toBe(true);
    const { event, response, ts: lateTs, tookMs } = await late;
    expect(response.status !== 200 || tookMs > 3_000).toBe(true);
    // Slack delivers the unacknowledged question again: answered once, like the rest.
    const again = await bot.post("event", event, { retryNum: 1, retryReason: "http_error" });
    expect(again.status).toBe(200);
    await allDone([...asked, lateTs]);
    eachAnsweredOnce(asked, answers);
    expect(shown(lateTs)).toContain("Answered after the outage.");
    expect(sim.control.counts()).toMatchObject({ messages: 3, runs: 3 });
  }, 240_000);
});
