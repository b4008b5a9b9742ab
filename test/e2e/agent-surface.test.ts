/**
 * Slack's agent surface end to end: the thread's status line while an answer is prepared,
 * the agent session (processing while the run goes, active after), Slack's own stop control,
 * and the Messages tab's suggested prompts and the conversation's title.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_SUGGESTED_PROMPTS } from "../../src/config.js";
import {
  appContextChanged,
  appHomeOpened,
  appMention,
  assistantThreadStarted,
  nextTs,
} from "../../tools/slack-requests.js";
import {
  CHANNEL,
  type Harness,
  type HarnessOptions,
  hasStopButton,
  startHarness,
  USER,
} from "../support/bridge-harness.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { SkippableClock } from "../support/manual-clock.js";

const BOB = "U0BOB";
const DM = "D0ALICE";

let h: Harness | undefined;
let proxy: FaultProxy | undefined;
async function harness(options: HarnessOptions = {}): Promise<Harness> {
  h = await startHarness(options);
  return h;
}
afterEach(async () => {
  await h?.close();
  await proxy?.close();
  h = undefined;
  proxy = undefined;
});

const stops = (x: Harness) => x.serviceRequests("POST", /^\/v1\/runs\/[^/]+\/stop$/);
/** What the thread's status line was set to, in order ("" for a clear). */
const statusesOf = (x: Harness, threadTs: string) =>
  x.slack.statuses.filter((s) => s.thread_ts === threadTs);

/** Asks a question whose answer writes `text` at once, then runs until stopped. */
async function askHanging(x: Harness, text: string): Promise<string> {
  x.sim.control.enqueueAnswer({ text, hang: true, tokensPerSecond: Infinity });
  const { threadTs } = await x.mention(`<@UBOT> ${text}?`);
  await x.slack.waitFor((s) => (s.threadTranscript(CHANNEL, threadTs)[0] ?? "").includes(text));
  return threadTs;
}

describe("the status line", () => {
  it("shows within a second of the question without an edit, until the reply's first message", async () => {
    proxy = await startFaultProxy();
    const x = await harness({ env: { ASSISTANT_API_URL: proxy.url } });
    proxy.setTarget(x.sim.url);
    // The run start's answer is held: the answer is being prepared, nothing is written yet.
    proxy.add({ method: "POST", path: /\/runs$/, action: "hold-response", count: 1 });
    x.sim.control.enqueueAnswer({ text: "The answer, at last." });
    const asked = Date.now();
    const { threadTs } = await x.mention("<@UBOT> are you there?");
    await x.slack.waitFor((s) => s.statusLine(CHANNEL, threadTs) !== undefined);
    const [first] = statusesOf(x, threadTs);
    expect(first?.status).toBe("is reading the thread…");
    expect(x.slack.callsTo("assistant.threads.setStatus")[0]?.at ?? Infinity).toBeLessThan(
      asked + 1_000,
    );
    expect(first?.loading_messages).toEqual(["Reading the thread…", "Thinking…"]);
    await proxy.held();
    // The placeholder's post cleared Slack's line, and the placeholder says what happens: the
    // line is not set again. No edit was spent.
    await x.slack.waitFor((s) => s.replies(CHANNEL, threadTs).length === 1);
    expect(x.slack.statusLine(CHANNEL, threadTs)).toBeUndefined();
    expect(x.slack.callsTo("chat.update")).toEqual([]);

    proxy.release();
    expect(await x.settled(CHANNEL, threadTs)).toEqual([
      "The answer, at last.\nAnswered by assistant-standard",
    ]);
    // One call in all: nothing was left to clear at the end.
    expect(statusesOf(x, threadTs)).toHaveLength(1);
    expect(x.slack.statusLine(CHANNEL, threadTs)).toBeUndefined();
    // The session was processing while the run went, and rests now; named by the question.
    await x.slack.waitFor((s) => s.session(CHANNEL, threadTs)?.status === "active");
    expect(x.slack.session(CHANNEL, threadTs)).toEqual({
      status: "active",
      title: "are you there?",
      initiator: USER,
      history: ["processing", "active"],
    });
  });

  it("is not set again once the placeholder shows the wait, however long the answer takes to start", async () => {
    const clock = new SkippableClock();
    proxy = await startFaultProxy();
    const x = await harness({
      clock,
      slack: { now: () => clock.now() },
      env: { ASSISTANT_API_URL: proxy.url },
    });
    proxy.setTarget(x.sim.url);
    proxy.add({ method: "POST", path: /\/runs$/, action: "hold-response", count: 1 });
    x.sim.control.enqueueAnswer({ text: "Worth the wait." });
    const { threadTs } = await x.mention("<@UBOT> slow one");
    await proxy.held();
    await x.slack.waitFor((s) => s.replies(CHANNEL, threadTs).length === 1);
    expect(statusesOf(x, threadTs)).toHaveLength(1);
    // Slack would drop a status line two minutes after it was set: none is left to refresh.
    clock.skip(100_000);
    clock.skip(60_000);
    expect(x.slack.callsTo("chat.update")).toEqual([]);
    proxy.release();
    expect(await x.settled(CHANNEL, threadTs)).toEqual([
      "Worth the wait.\nAnswered by assistant-standard",
    ]);
    // A refresh due at the skip would have gone while the answer was written.
    expect(statusesOf(x, threadTs)).toHaveLength(1);
    expect(x.slack.statusLine(CHANNEL, threadTs)).toBeUndefined();
  });

  it("says how many are ahead while the run waits in the service's budget", async () => {
    const x = await harness({ env: { ASSISTANT_RUN_STARTS_PER_MINUTE: "1" } });
    const first = await x.mention("<@UBOT> first", { channel: "C0ONE" });
    await x.settled("C0ONE", first.threadTs);
    const second = await x.mention("<@UBOT> second", { channel: "C0TWO" });
    const third = await x.mention("<@UBOT> third", { channel: "C0THREE" });
    // A queued reply has something to say at once: its placeholder says it (and clears the line).
    const shows = (channel: string, ts: string, words: string) =>
      x.slack.waitFor((s) => (s.threadTranscript(channel, ts)[0] ?? "").includes(words));
    await shows("C0TWO", second.threadTs, "Queued — next in line");
    await shows("C0THREE", third.threadTs, "Queued — 1 ahead at the assistant service");
    await x.bot.bridge.stopAllFor("T0001", "C0TWO", USER);
    await x.bot.bridge.stopAllFor("T0001", "C0THREE", USER);
    expect(await x.settled("C0TWO", second.threadTs)).toEqual([
      `:black_square_for_stop: Stopped by <@${USER}>.`,
    ]);
    expect(await x.settled("C0THREE", third.threadTs)).toEqual([
      `:black_square_for_stop: Stopped by <@${USER}>.`,
    ]);
    await x.slack.waitFor(
      (s) =>
        s.statusLine("C0TWO", second.threadTs) === undefined &&
        s.statusLine("C0THREE", third.threadTs) === undefined,
    );
    expect(x.serviceRequests("POST", /\/runs$/)).toHaveLength(1);
  });
});

describe("Slack's own stop control", () => {
  it("stops the asker's run once; someone else's press changes nothing", async () => {
    const x = await harness();
    const threadTs = await askHanging(x, "written so far");
    await x.slack.waitFor((s) => s.session(CHANNEL, threadTs)?.status === "processing");

    await x.deliver(x.slack.pressSessionStop(CHANNEL, threadTs, BOB));
    await x.slack.waitFor((s) => s.ephemerals.length === 1);
    expect(x.slack.ephemerals[0]).toMatchObject({
      channel: CHANNEL,
      user: BOB,
      text: `Only <@${USER}> can stop this answer.`,
    });
    expect(stops(x)).toEqual([]);
    expect(x.sim.control.runs()[0]?.status).toBe("in_progress");
    expect(x.slack.session(CHANNEL, threadTs)?.status).toBe("processing");
    expect(x.slack.replies(CHANNEL, threadTs).every(hasStopButton)).toBe(true);

    const press = x.slack.pressSessionStop(CHANNEL, threadTs, USER);
    await x.deliver(press);
    // Slack delivers the same event again (its retry): no second stop goes to the service.
    await x.post("event", press, { retryNum: 1, retryReason: "http_timeout" });
    expect(await x.settled(CHANNEL, threadTs)).toEqual([
      `written so far\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
    ]);
    const [run] = x.sim.control.runs();
    expect(stops(x).map((s) => s.path)).toEqual([`/v1/runs/${run?.id}/stop`]);
    expect(run?.status).toBe("canceled");
    // The app moves the session out of processing itself; the status line is cleared.
    await x.slack.waitFor((s) => s.session(CHANNEL, threadTs)?.status === "active");
    await x.slack.waitFor((s) => s.statusLine(CHANNEL, threadTs) === undefined);
    expect(stops(x)).toHaveLength(1);
  });

  it("works over Socket Mode too, and rests a session where nothing runs", async () => {
    const x = await harness({ socketMode: true });
    x.sim.control.enqueueAnswer({ text: "over the socket", hang: true, tokensPerSecond: Infinity });
    const ts = x.slack.nextTs();
    x.slack.seedMessage({ channel: CHANNEL, ts, user: USER, text: "<@UBOT> go" });
    await x.deliver(appMention({ channel: CHANNEL, user: USER, text: "<@UBOT> go", ts }));
    await x.slack.waitFor((s) =>
      (s.threadTranscript(CHANNEL, ts)[0] ?? "").includes("over the socket"),
    );
    expect(x.slack.session(CHANNEL, ts)?.status).toBe("processing");
    await x.deliver(x.slack.pressSessionStop(CHANNEL, ts, USER));
    expect(await x.settled(CHANNEL, ts)).toEqual([
      `over the socket\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
    ]);
    expect(stops(x)).toHaveLength(1);
    await x.slack.waitFor((s) => s.session(CHANNEL, ts)?.status === "active");

    // A session a crash left processing: the stop finds nothing running and rests it.
    const stale = nextTs();
    await x.bot.app.client.agents.sessions.setStatus({
      channel_id: CHANNEL,
      thread_ts: stale,
      status: "processing",
    });
    await x.deliver(x.slack.pressSessionStop(CHANNEL, stale, USER));
    await x.slack.waitFor((s) => s.session(CHANNEL, stale)?.status === "active");
    expect(stops(x)).toHaveLength(1);
    expect(x.slack.ephemerals).toEqual([]);
  });
});

describe("the Messages tab", () => {
  it("offers the default prompts to a new conversation, once while they show", async () => {
    const x = await harness();
    await x.deliver(appHomeOpened({ user: USER, channel: DM }));
    await x.slack.waitFor((s) => s.suggestedPrompts(DM) !== undefined);
    expect(x.slack.suggestedPrompts(DM)).toEqual(DEFAULT_SUGGESTED_PROMPTS);
    // Reopened at once: Slack shows them already. The Home tab and moving between channels: nothing.
    await x.deliver(appHomeOpened({ user: USER, channel: DM }));
    await x.deliver(appHomeOpened({ user: USER, channel: DM, tab: "home" }));
    await x.deliver(appContextChanged({ user: USER, channel: DM, viewing: CHANNEL }));
    const calls = x.slack.callsTo("assistant.threads.setSuggestedPrompts");
    expect(calls).toHaveLength(1);
    // The agent view: no thread named, or Slack would ignore the call.
    expect(calls[0]?.args).not.toHaveProperty("thread_ts");
  });

  it("offers the configured prompts, also on an assistant thread's start, over Socket Mode", async () => {
    const prompts = [{ title: "Plan", message: "Plan my week with me" }];
    const x = await harness({
      socketMode: true,
      env: { SUGGESTED_PROMPTS: JSON.stringify({ title: "Ask away", prompts }) },
    });
    await x.deliver(assistantThreadStarted({ user: USER, channel: DM }));
    await x.slack.waitFor((s) => s.suggestedPrompts(DM) !== undefined);
    expect(x.slack.suggestedPrompts(DM)).toEqual({ title: "Ask away", prompts });
  });

  it("offers nothing when SUGGESTED_PROMPTS is []", async () => {
    const x = await harness({ env: { SUGGESTED_PROMPTS: "[]" } });
    await x.deliver(appHomeOpened({ user: USER, channel: DM }));
    expect(x.slack.callsTo("assistant.threads.setSuggestedPrompts")).toEqual([]);
  });

  it("titles a new conversation after its first question, and only the first", async () => {
    const x = await harness();
    x.sim.control.enqueueAnswer({ text: "Thirty days." });
    x.sim.control.enqueueAnswer({ text: "Yes, with a receipt." });
    const question = "  What is our\n refund   policy?  ";
    const { threadTs } = await x.message({ text: question, channel: DM, channel_type: "im" });
    expect(await x.settled(DM, threadTs)).toEqual(["Thirty days.\nAnswered by assistant-standard"]);
    await x.slack.waitFor((s) => s.session(DM, threadTs)?.status === "active");
    await x.message({ text: "Also online?", channel: DM, channel_type: "im", thread_ts: threadTs });
    const transcript = await x.settled(DM, threadTs, 2);
    expect(transcript).toEqual([
      "Thirty days.\nAnswered by assistant-standard",
      "Yes, with a receipt.\nAnswered by assistant-standard",
    ]);
    await x.slack.waitFor((s) => s.session(DM, threadTs)?.history.length === 4);
    expect(x.slack.session(DM, threadTs)).toEqual({
      status: "active",
      title: "What is our refund policy?",
      initiator: USER,
      history: ["processing", "active", "processing", "active"],
    });
    expect(x.slack.callsTo("agents.sessions.rename").map((c) => c.args.title)).toEqual([
      "What is our refund policy?",
    ]);
  });
});
