import { afterEach, describe, expect, it } from "vitest";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("run settings", () => {
  it("are read when the run start is sent, after its wait for the service's budget", async () => {
    h = await startHarness();
    const x = h;
    // The service refuses the first start for a second: the turn waits, shown as queued.
    x.sim.control.rateLimitNextRunStart(1);
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
    expect(Object.keys(starts[1]?.body as object)).toEqual(["triggerMessageId", "modelOverride"]);
    expect((starts[1]?.body as { modelOverride?: string }).modelOverride).toBe("max");
    expect(reply).toContain("assistant-max");
  });
});
