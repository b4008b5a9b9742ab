import { request } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import {
  appMention,
  blockAction,
  eventEnvelope,
  messageEvent,
  signRequest,
  slashCommand,
} from "../../tools/slack-requests.js";
import {
  CHANNEL,
  type Harness,
  hasStopButton,
  SIGNING_SECRET,
  startHarness,
  stopTurnId,
  USER,
} from "../support/bridge-harness.js";
import {
  CHILD_BOT_TOKEN,
  CHILD_SERVICE_TOKEN,
  CHILD_SIGNING_SECRET,
  type ChildBot,
  childEnv,
  mentionChild,
  startChildBot,
} from "../support/child-bot.js";
import { tempFolder } from "../support/temp-folder.js";

let h: Harness | undefined;
let child: ChildBot | undefined;
let sim: RunningSimulator | undefined;
let slack: FakeSlack | undefined;

afterEach(async () => {
  await h?.close();
  await child?.kill("SIGKILL");
  await slack?.close();
  await sim?.close();
  h = undefined;
  child = undefined;
  slack = undefined;
  sim = undefined;
});

/**
 * POSTs a raw body to the bot, signed (or not) as the test says, on a connection of its own
 * that is closed once the answer is in (a refused upload must not linger).
 */
function postRaw(
  url: string,
  body: string,
  options: { contentType?: string; secret?: string } = {},
): Promise<number> {
  const headers: Record<string, string> = options.secret
    ? { ...signRequest(options.secret, body, undefined, options.contentType) }
    : { "content-type": options.contentType ?? "application/json" };
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/slack/events`,
      { method: "POST", headers: { ...headers, connection: "close" }, agent: false },
      (res) => {
        res.resume();
        res.on("end", () => {
          req.destroy();
          resolve(res.statusCode ?? 0);
        });
      },
    );
    // The bot may refuse before reading the whole upload: the write then fails, harmlessly.
    req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
    req.end(body);
  });
}

const nothingDone = (x: Harness) => {
  expect(x.sim.control.requests).toEqual([]);
  expect(x.slack.calls.filter((c) => c.method !== "auth.test")).toEqual([]);
};

describe("requests that are not Slack's", () => {
  it("refuses a wrong, missing or stale signature before any work", async () => {
    h = await startHarness();
    const event = appMention({ channel: CHANNEL, user: USER, text: "<@UBOT> let me in" });
    expect((await h.post("event", event, { badSignature: true })).status).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 6 * 60;
    expect((await h.post("event", event, { timestamp: stale })).status).toBe(401);
    expect(await postRaw(h.botUrl, JSON.stringify(eventEnvelope(event)))).toBe(401);
    await h.bot.bridge.idle();
    nothingDone(h);
  });

  it("refuses an oversized body before any work", async () => {
    h = await startHarness();
    const event = appMention({
      channel: CHANNEL,
      user: USER,
      text: `<@UBOT> ${"x".repeat(2 * 1024 * 1024)}`,
    });
    const body = JSON.stringify(eventEnvelope(event));
    const status = await postRaw(h.botUrl, body, { secret: SIGNING_SECRET });
    expect(status).toBe(413);
    await h.bot.bridge.idle();
    nothingDone(h);
  });

  it("answers a message over MAX_MESSAGE_CHARS with a note instead of sending it on", async () => {
    h = await startHarness({ env: { MAX_MESSAGE_CHARS: "40" } });
    const { threadTs } = await h.mention(`<@UBOT> ${"please read all of this ".repeat(5)}`);
    const transcript = await h.settled(CHANNEL, threadTs);
    expect(transcript).toEqual([expect.stringContaining("the limit is 40")]);
    expect(h.sim.control.requests.filter((r) => r.method === "POST")).toEqual([]);
  });
});

describe("malformed Slack payloads", () => {
  it("are logged without tokens and dropped, and the process keeps answering", async () => {
    sim = await startSimulator({ queueDelayMs: 10, answer: { tokensPerSecond: 400 } });
    slack = await startFakeSlack();
    const databasePath = join(tempFolder("faults-hostile-"), "bridge.db");
    child = await startChildBot(
      childEnv({ slackApiUrl: slack.apiUrl, serviceUrl: sim.url, databasePath }),
    );
    const bot = child;
    const good = appMention({ channel: CHANNEL, user: USER, text: "<@UBOT> hi" });
    const events: Record<string, unknown>[] = [
      { ...good, user: undefined },
      { ...good, user: 42 },
      { ...good, ts: "yesterday" },
      { ...good, channel: undefined },
      { ...good, text: { nested: "object" } },
      { ...good, thread_ts: ["1.2"] },
      messageEvent({ channel: "D0DM", user: USER, text: "x", channel_type: "im", ts: "bad" }),
    ];
    const envelopes = [
      { type: "event_callback", team_id: "T0001", event_id: "EvBAD1" },
      { type: "event_callback", team_id: "T0001", event_id: "EvBAD2", event: "not an object" },
      { type: "event_callback", team_id: "T0001", event_id: "EvBAD3", event: null },
      { type: "something_else" },
    ];
    const signed = { secret: CHILD_SIGNING_SECRET };
    const form = { ...signed, contentType: "application/x-www-form-urlencoded" };
    const command = slashCommand({
      text: "stop",
      user_id: USER,
      channel_id: CHANNEL,
      response_url: "http://127.0.0.1:9/nowhere",
    });
    const action = blockAction({
      user: USER,
      channel: CHANNEL,
      message_ts: "1.1",
      action_id: "stop_run",
      value: "x",
    });
    // All at once: Bolt answers a request nobody acknowledged after about 3 s.
    const [parsedEvents, others] = await Promise.all([
      Promise.all(events.map((event) => bot.post("event", event).then((r) => r.status))),
      Promise.all([
        ...envelopes.map((envelope) => bot.post("event", envelope).then((r) => r.status)),
        postRaw(bot.url, "{not json", signed),
        postRaw(bot.url, "payload=%7Bbroken", form),
        postRaw(bot.url, "payload=%7B%22type%22%3A%22block_actions%22%7D", form),
        bot.post("command", { ...command, user_id: undefined }).then((r) => r.status),
        bot.post("action", { ...action, user: undefined }).then((r) => r.status),
      ]),
    ]);
    // A malformed event is acknowledged (so Slack does not retry it) and dropped.
    expect(parsedEvents).toEqual(events.map(() => 200));
    // Whatever Bolt answers to the rest, each request gets an answer.
    for (const status of others) expect(status).toBeGreaterThanOrEqual(200);

    // Still alive and answering.
    sim.control.enqueueAnswer({ text: "Alive and well." });
    const fake = slack;
    const { ts } = await mentionChild(bot, fake, {
      text: "<@UBOT> still there?",
      channel: CHANNEL,
      user: USER,
    });
    await fake.waitFor(
      (s) => s.replies(CHANNEL, ts).some((m) => !hasStopButton(m) && m.text.includes("Alive")),
      30_000,
    );
    expect(await Promise.race([bot.exited, Promise.resolve("running")])).toBe("running");
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    const logs = bot.logs.join("\n");
    expect(logs).toContain("dropped a malformed Slack event");
    for (const secret of [CHILD_BOT_TOKEN, CHILD_SIGNING_SECRET, CHILD_SERVICE_TOKEN]) {
      expect(logs).not.toContain(secret);
    }
    expect(bot.stderr()).not.toMatch(/Unhandled|TypeError/);
  });
});

describe("a conversation belongs to its Slack thread", () => {
  it("cannot be stopped, read or continued from another channel", async () => {
    h = await startHarness();
    h.sim.control.enqueueAnswer({ text: "Secret plans, written slowly.", hang: true });
    const { threadTs } = await h.mention("<@UBOT> the plans?");
    const x = h;
    await x.slack.waitFor((s) => s.replies(CHANNEL, threadTs).some((m) => hasStopButton(m)));
    const reply = x.slack.replies(CHANNEL, threadTs)[0];
    const turnId = stopTurnId(reply ?? {}) ?? "";
    expect(turnId).not.toBe("");

    // A forged Stop from another channel, by the asker and by someone else.
    for (const user of [USER, "U0MALLORY"]) {
      const res = await x.pressStop({
        turnId,
        user,
        channel: "C0OTHER",
        messageTs: reply?.ts ?? "",
      });
      expect(res.status).toBe(200);
    }
    // /assistant stop and status in another channel know nothing of it.
    await x.command("stop", { channel: "C0OTHER" });
    const status = await x.command("status", { channel: "C0OTHER" });
    expect(JSON.stringify(status.json)).toContain("no answers in progress here");
    // The same thread_ts in another channel is another conversation, and without a mention
    // it is not answered at all.
    await x.message({ text: "continue the plans", channel: "C0OTHER", thread_ts: threadTs });
    // The listener has run by the time the acknowledgement is in (same process, no await).
    expect(x.logs.some((l) => l.includes('"result":"ignored"') && l.includes("C0OTHER"))).toBe(
      true,
    );
    expect(x.sim.control.requests.filter((r) => r.path.endsWith("/stop"))).toEqual([]);
    expect(x.sim.control.runs()[0]?.status).not.toBe("canceled");
    expect(x.sim.control.counts()).toMatchObject({ threads: 1, messages: 1 });

    // The asker, in the turn's own channel, can stop it.
    await x.pressStop({ turnId, user: USER, channel: CHANNEL, messageTs: reply?.ts ?? "" });
    const transcript = await x.settled(CHANNEL, threadTs);
    expect(transcript[0]).toContain("Stopped");
    expect(x.sim.control.requests.filter((r) => r.path.endsWith("/stop"))).toHaveLength(1);
  });
});
