import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_TEAM } from "../../tools/slack-events.js";
import { appMention, eventEnvelope, nextTs } from "../../tools/slack-requests.js";
import { CHANNEL, type Harness, startHarness, USER } from "../support/bridge-harness.js";
import { clockAheadBy, SkippableClock } from "../support/manual-clock.js";

const DAY = 86_400_000;
const HOUR = 3_600_000;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const questionsPosted = (x: Harness) =>
  x.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/messages$/).map((r) => r.body);
const turnOf = async (x: Harness, ts: string) =>
  await x.bot.stores.turns.byMessage(DEFAULT_TEAM, CHANNEL, ts);

describe("what the bot keeps of a question", () => {
  it("purges its texts RETENTION_DAYS after its answer, and a Slack retry is still answered once", async () => {
    const clock = new SkippableClock();
    const x = await startHarness({ clock, env: { RETENTION_DAYS: "7" } });
    h = x;
    x.sim.control.enqueueAnswer({ text: "First answer." });
    const ts = nextTs();
    const text = "<@UBOT> what is our secret plan?";
    x.slack.seedMessage({ channel: CHANNEL, ts, user: USER, text });
    const mention = eventEnvelope(appMention({ channel: CHANNEL, user: USER, text, ts }), {
      eventId: "EvOld",
    });
    await x.post("event", mention);
    await x.settled(CHANNEL, ts);

    clock.skip(6 * DAY);
    x.sim.control.enqueueAnswer({ text: "Second answer." });
    const second = await x.mention("<@UBOT> and the next step?");
    await x.settled(CHANNEL, second.threadTs);
    expect((await turnOf(x, ts))?.content).toBe("what is our secret plan?");

    // Seven days and an hour after the first answer: the hourly sweep finds it past.
    clock.skip(DAY + HOUR);
    await vi.waitFor(async () => expect((await turnOf(x, ts))?.content).toBe(""));
    expect(await turnOf(x, ts)).toMatchObject({
      state: "finished",
      serviceContent: null,
      notes: [],
    });
    expect((await turnOf(x, second.ts))?.content).toBe("and the next step?");

    const posts = x.slack.callsTo("chat.postMessage").length;
    const retry = await x.post("event", mention, { retryNum: 1 });
    expect(retry.status).toBe(200);
    await x.bot.bridge.idle();
    expect(questionsPosted(x)).toEqual([
      { content: "what is our secret plan?" },
      { content: "and the next step?" },
    ]);
    expect(x.slack.callsTo("chat.postMessage")).toHaveLength(posts);
    expect(x.slack.threadTranscript(CHANNEL, ts)).toHaveLength(1);
  });

  it("purges at start what passed its retention while the bot was stopped", async () => {
    const x = await startHarness();
    h = x;
    x.sim.control.enqueueAnswer({ text: "An answer." });
    const file = x.slack.addFile({ name: "secret-plan.txt", content: "launch on the moon" });
    const { ts, threadTs } = await x.mention("<@UBOT> remember this?", { files: [file] });
    await x.settled(CHANNEL, threadTs);
    expect(await turnOf(x, ts)).toMatchObject({
      content: "remember this?",
      files: [{ id: file.id, name: "secret-plan.txt" }],
    });
    expect((await turnOf(x, ts))?.serviceContent).toContain("launch on the moon");

    // The default retention is 30 days; the bot comes back 31 days later: the file's name and
    // what it said go with the question's text.
    await x.restart(undefined, clockAheadBy(31 * DAY));
    expect(await turnOf(x, ts)).toMatchObject({
      state: "finished",
      content: "",
      files: [],
      serviceContent: null,
    });
  });
});
