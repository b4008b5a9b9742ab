/**
 * Two copies of the bot on one PostgreSQL database: a copy that stops hands its answer to the
 * other at once. (Follow-ups reaching the copy that does not hold their thread, and the order
 * of their replies, are thread-order-replicas.test.ts's.)
 */
import { describe, expect, it } from "vitest";
import { appMention, eventEnvelope, nextTs } from "../../tools/slack-requests.js";
import { hasStopButton } from "../support/bridge-harness.js";
import type { ChildBot } from "../support/child-bot.js";
import { testDatabase } from "../support/postgres.js";
import { clusterPerTest, deliver, launch, sim, slack } from "./replica-cluster.js";

clusterPerTest();

describe("two replicas on one PostgreSQL database", () => {
  it("hands a stopping replica's answer to another at once, not when its lease expires", async () => {
    const url = await testDatabase();
    // Leases of a minute: only a hand-back lets the other replica go on within seconds.
    const slow = { LEASE_SECONDS: "60", SHUTDOWN_GRACE_SECONDS: "0" };
    const [first, second] = await Promise.all([launch(url, slow), launch(url, slow)]);
    const answer = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of a long answer.`);
    sim.control.enqueueAnswer({ chunks: answer.map((line) => `${line}\n`), tokensPerSecond: 2 });
    const root = nextTs();
    const channel = "C0REPL0";
    slack.seedMessage({ channel, ts: root, user: "U0ANN", text: "<@UBOT> a long one" });
    await deliver(
      eventEnvelope(appMention({ channel, user: "U0ANN", text: "<@UBOT> a long one", ts: root })),
      [first as ChildBot],
    );
    await slack.waitFor((s) => s.threadTranscript(channel, root).some((t) => t.includes("Line 1")));
    const stopping = Date.now();
    expect(await first?.kill("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(first?.logs.some((l) => l.includes('"msg":"conversations handed back"'))).toBe(true);
    await slack.waitFor((s) => {
      const replies = s.replies(channel, root);
      return replies.length === 1 && !hasStopButton(replies[0] as never);
    }, 20_000);
    expect(Date.now() - stopping).toBeLessThan(20_000);
    expect(slack.threadTranscript(channel, root)[0]).toContain(answer.join("\n"));
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    // The first replica is gone: the second wrote the rest.
    expect(second?.logs.some((l) => l.includes('"level":50'))).toBe(false);
  }, 60_000);
});
