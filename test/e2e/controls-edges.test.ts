import { afterEach, describe, expect, it } from "vitest";
import { STOP_FAILED } from "../../src/slack/surfaces/controls.js";
import {
  CHANNEL,
  type Harness,
  startHarness,
  stopTurnId,
  USER,
} from "../support/bridge-harness.js";
import { clockAheadBy } from "../support/manual-clock.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("run settings", () => {
  it("are read when the run start is sent, after its wait for the service's budget", async () => {
    h = await startHarness();
    const x = h;
    // The service refuses the first start for three seconds: the turn waits, shown as queued
    // once it has waited a second.
    x.sim.control.rateLimitNextRunStart(3);
    const { threadTs } = await x.mention("<@UBOT> which model?");
    await x.slack.waitFor((s) =>
      s.replies(CHANNEL, threadTs).some((m) => /Queued/.test(s.visibleText(m))),
    );
    // Chosen while the start waits: the run that starts gets it.
    const ack = await x.command("model max");
    expect((ack.json as { text: string }).text).toMatch(/max/);
    const [reply] = await x.settled(CHANNEL, threadTs);
    const starts = x.sim.control.requests.filter(
      (r) => r.method === "POST" && r.path.endsWith("/runs"),
    );
    expect(starts.map((r) => r.status)).toEqual([429, 201]);
    const sent = (starts[1]?.body ?? {}) as Record<string, unknown>;
    expect(Object.keys(sent)).toEqual(["triggerMessageId", "modelOverride"]);
    expect(sent.modelOverride).toBe("max");
    expect(reply).toContain("assistant-max");
  });
});

describe("a stop the service does not take", () => {
  it("tells the person, and the answer goes on to its end", async () => {
    h = await startHarness({ simulator: { answer: { tokensPerSecond: 10 } } });
    const x = h;
    const answer = "This answer keeps going. ".repeat(8).trim();
    x.sim.control.enqueueAnswer({ text: answer });
    x.sim.control.failRequests({ count: 100, status: 503, method: "POST", pathPattern: /\/stop$/ });
    const { threadTs } = await x.mention("<@UBOT> go on");
    await x.slack.waitFor((s) =>
      s.replies(CHANNEL, threadTs).some((m) => s.visibleText(m).includes("This answer")),
    );
    const [message] = x.slack.replies(CHANNEL, threadTs);
    const turnId = stopTurnId(message ?? {});
    expect(turnId).toBeTruthy();
    await x.pressStop({ turnId: turnId ?? "", user: USER, messageTs: message?.ts ?? "" });
    await x.slack.waitFor((s) => s.callsTo("chat.postEphemeral").length > 0, 15_000);
    expect(x.slack.callsTo("chat.postEphemeral")[0]?.args.text).toBe(STOP_FAILED);
    const [reply] = await x.settled(CHANNEL, threadTs, 1, 20_000);
    expect(reply).toContain(answer);
    expect(reply).not.toMatch(/Stopped/);
  }, 30_000);
});

describe("the run time limit", () => {
  it("counts from the run's start, across a restart", async () => {
    h = await startHarness({ env: { RUN_TIMEOUT_SECONDS: "600" } });
    const x = h;
    x.sim.control.enqueueAnswer({ text: "Thinking out loud", hang: true });
    const { threadTs } = await x.mention("<@UBOT> never finish");
    await x.slack.waitFor((s) =>
      s.replies(CHANNEL, threadTs).some((m) => s.visibleText(m).includes("Thinking")),
    );
    // The bot comes back eleven minutes later: the run started that long ago.
    await x.restart({ SHUTDOWN_GRACE_SECONDS: "0" }, clockAheadBy(11 * 60_000));
    const [reply] = await x.settled(CHANNEL, threadTs, 1, 15_000);
    expect(reply).toContain(
      "The assistant did not finish within 10 minutes, so the run was stopped.",
    );
    expect(x.sim.control.requests.filter((r) => r.path.endsWith("/stop"))).toHaveLength(1);
    expect(x.sim.control.counts().runs).toBe(1);
  }, 30_000);
});
