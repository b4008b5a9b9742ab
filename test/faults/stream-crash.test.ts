import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, mentionChild, startChildBot } from "../support/child-bot.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";
import { tempFolder } from "../support/temp-folder.js";

const CHANNEL = "C0STREAM";
const USER = "U0ALICE";
const ANSWER = Array.from(
  { length: 10 },
  (_, i) => `${i + 1}. Line ${i + 1} of a streamed answer that takes a while.`,
).join("\n");

let sim: RunningSimulator;
let slack: FakeSlack;
let databasePath: string;
const children: ChildBot[] = [];
const proxies: FaultProxy[] = [];

beforeEach(async () => {
  sim = await startSimulator({ queueDelayMs: 10, answer: { tokensPerSecond: 40 } });
  slack = await startFakeSlack();
  databasePath = join(tempFolder("faults-stream-"), "bridge.db");
});

afterEach(async () => {
  for (const child of children.splice(0)) await child.kill("SIGKILL");
  for (const proxy of proxies.splice(0)) await proxy.close();
  await slack.close();
  await sim.close();
});

async function launch(slackUrl = slack.apiUrl): Promise<ChildBot> {
  const child = await startChildBot(
    childEnv({
      slackApiUrl: slackUrl,
      serviceUrl: sim.url,
      databasePath,
      extra: { SLACK_STREAMING: "auto" },
    }),
  );
  children.push(child);
  return child;
}

/** The Markdown of each of the bot's replies, once none carries a Stop button any more. */
async function settledBodies(threadTs: string): Promise<string[]> {
  await slack.waitFor((s) => {
    const replies = s.replies(CHANNEL, threadTs);
    return replies.length > 0 && replies.every((m) => !hasStopButton(m));
  }, 30_000);
  return slack.replies(CHANNEL, threadTs).map((m) => {
    const block = (m.blocks ?? []).find((b) => b.type === "markdown") as
      | { text?: string }
      | undefined;
    return block?.text ?? "";
  });
}

describe("the bot killed while it streams an answer", () => {
  it("ends the answer in the message it was streaming, with one run", async () => {
    sim.control.enqueueAnswer({ text: ANSWER });
    const first = await launch();
    const { ts } = await mentionChild(first, slack, {
      text: "<@UBOT> stream it",
      channel: CHANNEL,
      user: USER,
    });
    await slack.waitFor(
      (s) => s.threadTranscript(CHANNEL, ts).some((t) => t.includes("Line 2 of")),
      30_000,
    );
    await first.kill("SIGKILL");
    const [streamed] = slack.replies(CHANNEL, ts);
    expect(slack.streamState(CHANNEL, streamed?.ts ?? "")?.state).toBe("streaming");

    await launch();
    expect(await settledBodies(ts)).toEqual([ANSWER]);
    expect(slack.callsTo("chat.startStream")).toHaveLength(1);
    expect(slack.callsTo("chat.postMessage")).toEqual([]);
    expect(slack.callsTo("chat.stopStream").map((c) => c.args.ts)).toEqual([streamed?.ts]);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("finds the stream Slack started although the bot died before learning its ts", async () => {
    sim.control.enqueueAnswer({ text: ANSWER });
    const proxy = await startFaultProxy(new URL(slack.apiUrl).origin);
    proxies.push(proxy);
    // Slack starts the stream; its answer (the ts) never reaches the bot.
    proxy.add({ path: /\/chat\.startStream$/, action: "hold-response", count: 1 });
    const first = await launch(`${proxy.url}/api/`);
    const { ts } = await mentionChild(first, slack, {
      text: "<@UBOT> stream it",
      channel: CHANNEL,
      user: USER,
    });
    await proxy.held();
    await first.kill("SIGKILL");
    expect(slack.replies(CHANNEL, ts)).toHaveLength(1);

    await launch();
    expect(await settledBodies(ts)).toEqual([ANSWER]);
    expect(slack.replies(CHANNEL, ts)).toHaveLength(1);
    expect(slack.callsTo("chat.startStream")).toHaveLength(1);
    expect(slack.callsTo("chat.postMessage")).toEqual([]);
    // It was found by reading the thread, then stopped and marked by the new process.
    expect(slack.callsTo("conversations.replies").length).toBeGreaterThan(0);
    expect(slack.replies(CHANNEL, ts)[0]?.metadata).toMatchObject({
      event_payload: { part: 0 },
    });
  });
});
