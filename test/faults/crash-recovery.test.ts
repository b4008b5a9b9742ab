import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { START_UNCONFIRMED } from "../../src/bridge/turn/turn-ending.js";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, mentionChild, startChildBot } from "../support/child-bot.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { tempFolder } from "../support/temp-folder.js";

const CHANNEL = "C0CRASH";
const USER = "U0ALICE";
const ANSWER = Array.from(
  { length: 8 },
  (_, i) => `${i + 1}. Line ${i + 1} of an answer that takes a while to write.`,
).join("\n");

let sim: RunningSimulator;
let slack: FakeSlack;
let databasePath: string;
const children: ChildBot[] = [];
const proxies: FaultProxy[] = [];

beforeEach(async () => {
  sim = await startSimulator({ queueDelayMs: 10, answer: { tokensPerSecond: 60 } });
  slack = await startFakeSlack();
  databasePath = join(tempFolder("faults-crash-"), "bridge.db");
});

afterEach(async () => {
  for (const child of children.splice(0)) await child.kill("SIGKILL");
  for (const proxy of proxies.splice(0)) await proxy.close();
  await slack.close();
  await sim.close();
});

async function launch(
  urls: { slack?: string; service?: string } = {},
  extra: Record<string, string> = {},
): Promise<ChildBot> {
  const child = await startChildBot(
    childEnv({
      slackApiUrl: urls.slack ?? slack.apiUrl,
      serviceUrl: urls.service ?? sim.url,
      databasePath,
      extra,
    }),
  );
  children.push(child);
  return child;
}

async function proxy(target: string): Promise<FaultProxy> {
  const p = await startFaultProxy(target);
  proxies.push(p);
  return p;
}

const seed = (m: { channel: string; ts: string; user: string; text: string }) =>
  slack.seedMessage(m);

/** The thread's bot replies, once none of them carries a Stop button any more. */
async function settled(threadTs: string, timeoutMs = 30_000): Promise<string[]> {
  await slack.waitFor((s) => {
    const replies = s.replies(CHANNEL, threadTs);
    return replies.length > 0 && replies.every((m) => !hasStopButton(m));
  }, timeoutMs);
  return slack.threadTranscript(CHANNEL, threadTs);
}

const posts = () =>
  sim.control.requests.filter((r) => r.method === "POST" && /\/messages$/.test(r.path));
/** The bot reads the run's stream only once it has recorded the run's id. */
const runFollowed = () =>
  sim.control.requests.some((r) => r.method === "GET" && /\/stream$/.test(r.path));
/**
 * Resolves once `holds()` is true, checked at each request the simulator records: the fake
 * Slack's waitFor re-checks only on Slack's own activity, and none may follow.
 */
function serviceUntil(holds: () => boolean, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const events = sim.control.events;
    const check = () => {
      if (!holds()) return;
      done();
      resolve();
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the simulator did not see it within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      events.off("request", check);
    };
    events.on("request", check);
    check();
  });
}
const runStarts = () =>
  sim.control.requests.filter((r) => r.method === "POST" && /\/runs$/.test(r.path));

describe("the bot killed and started again", () => {
  it("finishes an answer cut by SIGKILL with the complete text, one message and one run", async () => {
    sim.control.enqueueAnswer({ text: ANSWER });
    const first = await launch();
    const { ts } = await mentionChild(first, seed, {
      text: "<@UBOT> a long answer please",
      channel: CHANNEL,
      user: USER,
    });
    // Some of the answer is on screen: the bot is in the middle of writing it.
    await slack.waitFor(
      (s) => s.threadTranscript(CHANNEL, ts).some((t) => t.includes("Line 2 of")),
      30_000,
    );
    await first.kill("SIGKILL");
    expect(sim.control.runs()[0]?.status).not.toBe("completed");

    const second = await launch();
    const transcript = await settled(ts);
    expect(transcript).toHaveLength(1);
    expect(transcript[0]).toContain(ANSWER);
    expect(transcript[0]?.split(ANSWER)).toHaveLength(2);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    expect(posts()).toHaveLength(1);
    expect(runStarts()).toHaveLength(1);
    expect(slack.callsTo("chat.postMessage").filter((c) => c.ok)).toHaveLength(1);
    await second.waitForLog(/"msg":"resuming unfinished turns"/);
  });

  it("takes a streamed answer's Stop button away when it died between the stream's end and the edit that tidies it", async () => {
    const streaming = { SLACK_STREAMING: "auto" };
    const answer = "A short answer, whole before the crash.";
    sim.control.enqueueAnswer({ text: answer });
    // The tidy edit meets a long 429: the answer is whole in Slack, its Stop button still there.
    slack.failNext("chat.update", { status: 429, retryAfter: 120 });
    const first = await launch({}, streaming);
    const { ts } = await mentionChild(first, seed, {
      text: "<@UBOT> quick one",
      channel: CHANNEL,
      user: USER,
    });
    await slack.waitFor((s) => s.callsTo("chat.update").length === 1);
    const [reply] = slack.replies(CHANNEL, ts);
    expect(slack.streamState(CHANNEL, reply?.ts ?? "")?.state).toBe("stopped");
    expect(JSON.stringify(reply?.blocks)).toContain("stop_run");
    await first.kill("SIGKILL");

    await launch({}, streaming);
    const transcript = await settled(ts);
    expect(transcript).toEqual([expect.stringContaining(answer)]);
    expect(slack.callsTo("chat.startStream")).toHaveLength(1);
    expect(runStarts()).toHaveLength(1);
  });

  it("finds the message the service accepted before the crash instead of posting it again", async () => {
    sim.control.enqueueAnswer({ text: "Answered after the crash." });
    const service = await proxy(sim.url);
    // The service stores the message, but its answer never reaches the bot.
    service.add({ method: "POST", path: /\/messages$/, action: "hold-response", count: 1 });
    const first = await launch({ service: service.url });
    const { ts } = await mentionChild(first, seed, {
      text: "<@UBOT> remember me",
      channel: CHANNEL,
      user: USER,
    });
    await service.held();
    await first.kill("SIGKILL");
    expect(sim.control.counts()).toMatchObject({ messages: 1, runs: 0 });

    await launch({ service: service.url });
    const transcript = await settled(ts);
    expect(transcript).toEqual([expect.stringContaining("Answered after the crash.")]);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    expect(posts()).toHaveLength(1);
    const listed = sim.control.requests.filter(
      (r) => r.method === "GET" && /\/messages$/.test(r.path),
    );
    expect(listed.length).toBeGreaterThan(0);
    const [thread] = sim.control.threads();
    const [message] = sim.control.messages(thread?.id ?? "");
    expect(runStarts()[0]?.body).toEqual({ triggerMessageId: message?.id });
  });

  it("never starts a second run after dying between the run start and recording its id", async () => {
    const service = await proxy(sim.url);
    // The service creates the run, but its answer (the run id) never reaches the bot.
    service.add({ method: "POST", path: /\/runs$/, action: "hold-response", count: 1 });
    const first = await launch({ service: service.url });
    const { ts } = await mentionChild(first, seed, {
      text: "<@UBOT> start me once",
      channel: CHANNEL,
      user: USER,
    });
    await service.held();
    await first.kill("SIGKILL");
    expect(sim.control.counts().runs).toBe(1);

    await launch({ service: service.url });
    const transcript = await settled(ts);
    expect(transcript).toEqual([expect.stringContaining(START_UNCONFIRMED)]);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    expect(runStarts()).toHaveLength(1);
  });

  it("posts the reply after a restart when the bot died before its placeholder", async () => {
    sim.control.enqueueAnswer({ text: "Here after all." });
    const slackProxy = await proxy(slack.apiUrl);
    // The placeholder post leaves the bot but never reaches Slack.
    slackProxy.add({ path: /chat\.postMessage$/, action: "hold-request", count: 1 });
    const first = await launch({ slack: `${slackProxy.url}/api/` });
    const { ts } = await mentionChild(first, seed, {
      text: "<@UBOT> are you there?",
      channel: CHANNEL,
      user: USER,
    });
    await slackProxy.held();
    // The run does not wait for the placeholder: the service writes while Slack is slow.
    await serviceUntil(runFollowed);
    await first.kill("SIGKILL");
    expect(slack.replies(CHANNEL, ts)).toEqual([]);

    await launch();
    const transcript = await settled(ts);
    expect(transcript).toEqual([expect.stringContaining("Here after all.")]);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("continues in the placeholder Slack took when the bot died before recording it", async () => {
    sim.control.enqueueAnswer({ text: "One reply, not two." });
    const slackProxy = await proxy(slack.apiUrl);
    // Slack stores the placeholder, but its answer (the ts) never reaches the bot.
    slackProxy.add({ path: /chat\.postMessage$/, action: "hold-response", count: 1 });
    const first = await launch({ slack: `${slackProxy.url}/api/` });
    const { ts } = await mentionChild(first, seed, {
      text: "<@UBOT> only once?",
      channel: CHANNEL,
      user: USER,
    });
    await slackProxy.held();
    await slack.waitFor((s) => s.replies(CHANNEL, ts).length === 1);
    await serviceUntil(runFollowed);
    await first.kill("SIGKILL");

    await launch();
    const transcript = await settled(ts);
    expect(transcript).toEqual([expect.stringContaining("One reply, not two.")]);
    expect(slack.callsTo("chat.postMessage")).toHaveLength(1);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("answers a Slack retry once, before and after a restart", async () => {
    sim.control.enqueueAnswer({ text: "Exactly once." });
    const first = await launch();
    const { ts, event } = await mentionChild(first, seed, {
      text: "<@UBOT> once please",
      channel: CHANNEL,
      user: USER,
      eventId: "EvRETRY1",
    });
    for (const retryNum of [1, 2]) {
      const res = await first.post("event", event, { retryNum });
      expect(res.status).toBe(200);
    }
    await settled(ts);
    await first.kill("SIGKILL");

    const second = await launch();
    const res = await second.post("event", event, { retryNum: 3 });
    expect(res.status).toBe(200);
    await second.waitForLog(/"result":"duplicate"/);
    expect(slack.threadTranscript(CHANNEL, ts)).toEqual([expect.stringContaining("Exactly once.")]);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    expect(slack.callsTo("chat.postMessage")).toHaveLength(1);
  });
});
