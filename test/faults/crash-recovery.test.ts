/** The bot killed in the middle of an answer, and started again: the answer completes once. */
import { describe, expect, it } from "vitest";
import { mentionChild } from "../support/child-bot.js";
import {
  ANSWER,
  CHANNEL,
  crashBotPerTest,
  launch,
  posts,
  proxy,
  runStarts,
  settled,
  sim,
  slack,
  USER,
} from "./crash-bot.js";

crashBotPerTest();

describe("the bot killed and started again", () => {
  it("finishes an answer cut by SIGKILL with the complete text, one message and one run", async () => {
    sim.control.enqueueAnswer({ text: ANSWER });
    const first = await launch();
    const { ts } = await mentionChild(first, slack, {
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
    const { ts } = await mentionChild(first, slack, {
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
    const { ts } = await mentionChild(first, slack, {
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
});
