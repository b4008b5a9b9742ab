import { afterEach, describe, expect, it, vi } from "vitest";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { SkippableClock } from "../support/manual-clock.js";

let h: Harness | undefined;
let proxy: FaultProxy | undefined;

afterEach(async () => {
  await h?.close();
  await proxy?.close();
  h = undefined;
  proxy = undefined;
});

const ANSWER = [
  "# Stream trouble",
  "",
  "The final text comes from the run, *whatever* the stream said:",
  "",
  "```js",
  "console.log('exact');",
  "```",
  "",
  "- one",
  "- two & three",
].join("\n");

/** A harness whose service calls go through a fault proxy in front of the simulator. */
async function proxied(env: Record<string, string> = {}): Promise<Harness> {
  proxy = await startFaultProxy();
  h = await startHarness({
    env: { ASSISTANT_API_URL: proxy.url, ...env },
    simulator: { answer: { tokensPerSecond: 100 } },
  });
  proxy.setTarget(h.sim.url);
  return h;
}

const polls = (x: Harness) =>
  x.sim.control.requests.filter((r) => r.method === "GET" && /^\/v1\/run\/[^/]+$/.test(r.path));

describe("a run stream that misbehaves", () => {
  it("drops: the relay reopens or polls, and the final text is exact", async () => {
    h = await startHarness({ simulator: { answer: { tokensPerSecond: 100 } } });
    h.sim.control.dropStreamsAfter(2);
    h.sim.control.enqueueAnswer({ text: ANSWER });
    const { threadTs } = await h.mention("<@UBOT> drop it");
    const transcript = await h.settled(CHANNEL, threadTs);
    expect(transcript).toHaveLength(1);
    expect(transcript[0]).toContain(ANSWER);
    const streams = h.sim.control.requests.filter((r) => r.path.endsWith("/stream"));
    expect(streams.length).toBeGreaterThan(1);
    expect(polls(h).length).toBeGreaterThan(0);
    expect(h.sim.control.counts().runs).toBe(1);
  });

  it("stalls: the relay looks at the run itself, and the final text is exact", async () => {
    const x = await proxied();
    proxy?.add({ method: "GET", path: /\/stream$/, action: "stall" });
    x.sim.control.enqueueAnswer({ text: ANSWER });
    const { threadTs } = await x.mention("<@UBOT> stall it");
    const transcript = await x.settled(CHANNEL, threadTs, 1, 15_000);
    expect(transcript).toEqual([expect.stringContaining(ANSWER)]);
    expect(polls(x).length).toBeGreaterThan(0);
  });

  it("sends garbage: the relay ignores it, and the final text is exact", async () => {
    const x = await proxied();
    const garbage = [
      "data: {not json at all\n\n",
      "event: delta\ndata: \u0000\u0001 definitely not the answer\n\n",
      'data: {"delta": 42, "choices": "nope"}\n\n',
      "\u00ff\u00fe random bytes without framing",
    ].join("");
    proxy?.add({ method: "GET", path: /\/stream$/, action: { garbage } });
    x.sim.control.enqueueAnswer({ text: ANSWER });
    const { threadTs } = await x.mention("<@UBOT> garble it");
    const transcript = await x.settled(CHANNEL, threadTs, 1, 15_000);
    expect(transcript).toHaveLength(1);
    expect(transcript[0]).toContain(ANSWER);
    expect(transcript[0]).not.toContain("definitely not the answer");
  });
});

/** Waits until the reply in this thread shows `text`. */
function shown(x: Harness, threadTs: string, text: string): Promise<void> {
  return x.slack.waitFor((s) =>
    s.replies(CHANNEL, threadTs).some((m) => s.visibleText(m).includes(text)),
  );
}

describe("a run that never ends", () => {
  it("is stopped after RUN_TIMEOUT_SECONDS and the reply says the assistant did not finish", async () => {
    const clock = new SkippableClock();
    h = await startHarness({ clock, env: { RUN_TIMEOUT_SECONDS: "600" } });
    h.sim.control.enqueueAnswer({ text: "Partial thoughts", hang: true });
    const { threadTs } = await h.mention("<@UBOT> think forever");
    await shown(h, threadTs, "Partial thoughts");
    clock.skip(600_000);
    const transcript = await h.settled(CHANNEL, threadTs, 1, 15_000);
    expect(transcript).toHaveLength(1);
    expect(transcript[0]).toContain("did not finish within 10 minutes");
    expect(transcript[0]).toContain("Partial thoughts");
    const [run] = h.sim.control.runs();
    expect(run?.status).toBe("canceled");
    expect(h.sim.control.requests.filter((r) => r.path.endsWith("/stop"))).toHaveLength(1);
  });

  it("ends with the timeout message even when the service will not stop the run", async () => {
    const clock = new SkippableClock();
    h = await startHarness({ clock, env: { RUN_TIMEOUT_SECONDS: "600" } });
    h.sim.control.enqueueAnswer({ text: "Stuck", hang: true });
    h.sim.control.failRequests({ count: 1_000, status: 500, pathPattern: /\/stop$/ });
    const { threadTs } = await h.mention("<@UBOT> never stop");
    await shown(h, threadTs, "Stuck");
    clock.skip(600_000);
    const sim = h.sim;
    await vi.waitFor(() => {
      expect(sim.control.requests.some((r) => r.path.endsWith("/stop"))).toBe(true);
    });
    // The run was told to stop and did not: after the grace period, following ends.
    clock.skip(10_000);
    const transcript = await h.settled(CHANNEL, threadTs, 1, 20_000);
    expect(transcript).toHaveLength(1);
    expect(transcript[0]).toContain("did not finish");
  });
});
