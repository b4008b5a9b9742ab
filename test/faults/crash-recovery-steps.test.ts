/** The bot killed between two steps of a turn, and started again: no step done twice. */
import { describe, expect, it } from "vitest";
import { START_UNCONFIRMED } from "../../src/bridge/turn/turn-ending.js";
import { mentionChild } from "../support/child-bot.js";
import {
  CHANNEL,
  crashBotPerTest,
  launch,
  proxy,
  runFollowed,
  runStarts,
  serviceUntil,
  settled,
  sim,
  slack,
  USER,
} from "./crash-bot.js";

crashBotPerTest();

describe("the bot killed between a turn's steps and started again", () => {
  it("never starts a second run after dying between the run start and recording its id", async () => {
    const service = await proxy(sim.url);
    // The service creates the run, but its answer (the run id) never reaches the bot.
    service.add({ method: "POST", path: /\/runs$/, action: "hold-response", count: 1 });
    const first = await launch({ service: service.url });
    const { ts } = await mentionChild(first, slack, {
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
    const { ts } = await mentionChild(first, slack, {
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
    const { ts } = await mentionChild(first, slack, {
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
    const { ts, event } = await mentionChild(first, slack, {
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
