import { afterEach, describe, expect, it } from "vitest";
import { START_UNCONFIRMED } from "../../src/bridge/turn/turn-ending.js";
import { CHANNEL, type Harness, hasStopButton, startHarness } from "../support/bridge-harness.js";
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

/** Whether any post or edit of the bot so far showed this text. */
function everShown(x: Harness, text: string): boolean {
  return x.slack.calls.some(
    (c) =>
      (c.method === "chat.update" || c.method === "chat.postMessage") &&
      JSON.stringify(c.args).includes(text),
  );
}

const KEEPS_TRYING = "not answering right now; the bot keeps trying";

describe("the assistant service in trouble", () => {
  it("waits out a 429 on the run start, shows the turn queued, then answers with one run", async () => {
    h = await startHarness();
    // Three seconds: a start's wait is shown once it has lasted a second.
    h.sim.control.rateLimitNextRunStart(3);
    h.sim.control.enqueueAnswer({ text: "After the wait." });
    const { threadTs } = await h.mention("<@UBOT> busy?");
    const transcript = await h.settled(CHANNEL, threadTs);
    expect(transcript).toEqual([expect.stringContaining("After the wait.")]);
    expect(everShown(h, "Queued")).toBe(true);
    const starts = h.sim.control.requests.filter((r) => /\/runs$/.test(r.path));
    expect(starts.map((r) => r.status)).toEqual([429, 201]);
    expect(h.sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("says it keeps trying through 500s and resets, then completes with one message and one run", async () => {
    h = await startHarness({ env: { SERVICE_OUTAGE_SECONDS: "60" } });
    const { control } = h.sim;
    control.failRequests({ count: 1, status: 500, method: "POST", pathPattern: /^\/v1\/thread$/ });
    control.failRequests({
      count: 1,
      status: "reset",
      method: "POST",
      pathPattern: /\/messages$/,
    });
    // Reads fail too: polls and stream opens are retried with backoff.
    control.failRequests({ count: 3, status: 503, method: "GET", pathPattern: /^\/v1\/run\// });
    control.enqueueAnswer({ text: "Back in business." });
    const { threadTs } = await h.mention("<@UBOT> hello?");
    await h.slack.waitFor(() => everShown(h as Harness, KEEPS_TRYING), 30_000);
    const transcript = await h.settled(CHANNEL, threadTs, 1, 30_000);
    expect(transcript).toEqual([expect.stringContaining("Back in business.")]);
    expect(transcript[0]).not.toContain(KEEPS_TRYING);
    expect(control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    const failed = control.requests.filter((r) => r.status >= 500 || r.status === 0);
    expect(failed).toHaveLength(5);
  });

  it("starts one run at most when the service starts it and resets the connection, and says so", async () => {
    h = await startHarness({ env: { SERVICE_OUTAGE_SECONDS: "60" } });
    const { control } = h.sim;
    control.failRequests({
      count: 1,
      status: "reset-after",
      method: "POST",
      pathPattern: /\/runs$/,
    });
    const { threadTs } = await h.mention("<@UBOT> only once, please");
    const transcript = await h.settled(CHANNEL, threadTs);
    expect(transcript).toEqual([expect.stringContaining(START_UNCONFIRMED)]);
    expect(control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    expect(control.requests.filter((r) => /\/runs$/.test(r.path))).toHaveLength(1);
    expect(everShown(h, KEEPS_TRYING)).toBe(false);
  });

  it("posts a repeated question again after a reset, not taking it for the earlier one", async () => {
    h = await startHarness();
    const { control } = h.sim;
    control.enqueueAnswer({ text: "First answer." });
    const { threadTs } = await h.mention("<@UBOT> same question?");
    await h.settled(CHANNEL, threadTs);
    // The repeat's first post is cut off before the service stores it: the bot must look,
    // find only the earlier (already answered) message, and post the repeat.
    control.failRequests({ count: 1, status: "reset", method: "POST", pathPattern: /\/messages$/ });
    control.enqueueAnswer({ text: "Second answer." });
    await h.message({ text: "same question?", thread_ts: threadTs });
    const transcript = await h.settled(CHANNEL, threadTs, 2, 20_000);
    expect(transcript[1]).toContain("Second answer.");
    expect(control.counts()).toEqual({ threads: 1, messages: 2, runs: 2 });
    const [thread] = control.threads();
    const questions = control.messages(thread?.id ?? "").filter((m) => m.role === "user");
    const triggers = control.runs().map((r) => r.triggerMessageId);
    expect(triggers).toEqual(questions.map((m) => m.id));
  });

  it("tells the person while the service refuses connections, and answers once it is back", async () => {
    proxy = await startFaultProxy();
    h = await startHarness({ env: { ASSISTANT_API_URL: proxy.url } });
    proxy.setTarget(h.sim.url);
    await proxy.refuse();
    h.sim.control.enqueueAnswer({ text: "Connected again." });
    const { threadTs } = await h.mention("<@UBOT> anyone?");
    await h.slack.waitFor(() => everShown(h as Harness, KEEPS_TRYING), 30_000);
    expect(h.sim.control.requests).toEqual([]);
    await proxy.accept();
    const transcript = await h.settled(CHANNEL, threadTs, 1, 30_000);
    expect(transcript).toEqual([expect.stringContaining("Connected again.")]);
    expect(h.sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("ends with a clear error when the service stays down past SERVICE_OUTAGE_SECONDS", async () => {
    const clock = new SkippableClock();
    h = await startHarness({ clock });
    h.sim.control.failRequests({ count: 1_000, status: 500 });
    const { threadTs } = await h.mention("<@UBOT> still down?");
    await h.slack.waitFor(() => everShown(h as Harness, KEEPS_TRYING));
    // The default limit (120 s) passes at once: the next attempt is the last.
    clock.skip(120_000);
    const transcript = await h.settled(CHANNEL, threadTs, 1, 20_000);
    expect(transcript).toEqual([
      expect.stringContaining("The assistant service could not be reached"),
    ]);
    expect(h.slack.replies(CHANNEL, threadTs).every((m) => !hasStopButton(m))).toBe(true);
    expect(h.sim.control.counts()).toEqual({ threads: 0, messages: 0, runs: 0 });
  });
});
