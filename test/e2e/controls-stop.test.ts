/**
 * Stopping answers end to end: `/assistant stop`, the Stop button (by the asker and by
 * someone else), `/assistant status` while answers run, and stops of turns still queued,
 * in the service budget or behind an earlier turn of their thread, which never start a run.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_TEAM } from "../../tools/slack-requests.js";
import {
  CHANNEL,
  type Harness,
  type HarnessOptions,
  hasStopButton,
  startHarness,
  stopTurnId,
  USER,
} from "../support/bridge-harness.js";
import { type FaultProxy, startFaultProxy } from "../support/fault-proxy.js";

const BOB = "U0BOB";
const OTHER_CHANNEL = "C0OTHER";

let h: Harness | undefined;
let proxy: FaultProxy | undefined;
/** Edits are not the subject here: a roomier edit budget keeps several stops quick. */
async function harness(options: HarnessOptions = {}): Promise<Harness> {
  h = await startHarness({
    ...options,
    env: { SLACK_UPDATES_PER_MINUTE: "600", ...options.env },
    slack: { limits: { "chat.update": 1_000 } },
  });
  return h;
}
afterEach(async () => {
  await h?.close();
  await proxy?.close();
  h = undefined;
  proxy = undefined;
});

const runStarts = (x: Harness) => x.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/runs$/);
const messagePosts = (x: Harness) => x.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/messages$/);
const stops = (x: Harness) => x.serviceRequests("POST", /^\/v1\/runs\/[^/]+\/stop$/);

/** Resolves once the simulator has `count` runs and every one of them has left `queued`. */
function runsWorking(x: Harness, count: number): Promise<void> {
  const done = () => {
    const runs = x.sim.control.runs();
    return runs.length >= count && runs.every((r) => r.status !== "queued");
  };
  return new Promise((resolve) => {
    if (done()) return resolve();
    const check = () => {
      if (!done()) return;
      x.sim.control.events.off("run-status", check);
      resolve();
    };
    x.sim.control.events.on("run-status", check);
  });
}

/**
 * Asks a question whose answer writes `text` at once and then keeps running until stopped;
 * resolves once the run works (its text written), so a stop now must keep that text.
 */
async function askHanging(
  x: Harness,
  text: string,
  fields: { channel?: string; user?: string } = {},
): Promise<{ threadTs: string; channel: string }> {
  const before = x.sim.control.runs().length;
  x.sim.control.enqueueAnswer({ text, hang: true, tokensPerSecond: Infinity });
  const channel = fields.channel ?? CHANNEL;
  const { threadTs } = await x.mention(`<@UBOT> ${text}?`, { channel, user: fields.user ?? USER });
  await runsWorking(x, before + 1);
  // The reply shows once the channel's posting pace lets it; the run does not wait for it.
  await x.slack.waitFor((s) => s.replies(channel, threadTs).length > 0);
  return { threadTs, channel };
}

/**
 * Resolves with the thread's transcript once it holds `count` replies and none still has a
 * Stop button. Unlike `settled` it does not wait for the other conversations to end.
 */
async function ended(x: Harness, channel: string, threadTs: string, count = 1): Promise<string[]> {
  await x.slack.waitFor((s) => {
    const replies = s.replies(channel, threadTs);
    return replies.length >= count && replies.every((m) => !hasStopButton(m));
  });
  return x.slack.threadTranscript(channel, threadTs);
}

function lastReply(x: Harness, channel: string, threadTs: string) {
  const reply = x.slack.replies(channel, threadTs).at(-1);
  if (!reply) throw new Error(`no reply in ${channel} ${threadTs}`);
  return reply;
}

async function ephemeralCommand(x: Harness, text: string, user = USER, channel = CHANNEL) {
  const response = await x.command(text, { user, channel });
  expect(response.status).toBe(200);
  expect(response.ms).toBeLessThan(3_000);
  const json = response.json as { response_type?: string; text?: string };
  expect(json.response_type).toBe("ephemeral");
  return json.text ?? "";
}

describe("/assistant stop", () => {
  it("stops this person's running answers in this channel only, keeping the text so far", async () => {
    const x = await harness();
    const first = await askHanging(x, "alpha partial");
    const second = await askHanging(x, "beta partial");
    const bobs = await askHanging(x, "bob partial", { user: BOB });
    const elsewhere = await askHanging(x, "other partial", { channel: OTHER_CHANNEL });
    const runs = x.sim.control.runs();
    expect(runs).toHaveLength(4);

    expect(await ephemeralCommand(x, "stop")).toBe("Stopping your 2 answers in this channel…");
    const [a, b] = await Promise.all([
      ended(x, CHANNEL, first.threadTs),
      ended(x, CHANNEL, second.threadTs),
    ]);
    expect(a).toEqual([
      `alpha partial\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
    ]);
    expect(b).toEqual([
      `beta partial\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
    ]);
    const stoppedRuns = runs.slice(0, 2).map((r) => r.id);
    expect(
      stops(x)
        .map((s) => s.path.split("/")[3])
        .sort(),
    ).toEqual([...stoppedRuns].sort());
    expect(x.sim.control.runs().map((r) => r.status)).toEqual([
      "canceled",
      "canceled",
      "in_progress",
      "in_progress",
    ]);
    // Bob's answer and Alice's answer in another channel go on, Stop button and all.
    expect(hasStopButton(lastReply(x, CHANNEL, bobs.threadTs))).toBe(true);
    expect(hasStopButton(lastReply(x, OTHER_CHANNEL, elsewhere.threadTs))).toBe(true);

    expect(await ephemeralCommand(x, "stop", BOB)).toBe("Stopping your answer in this channel…");
    expect(await ephemeralCommand(x, "stop", USER, OTHER_CHANNEL)).toBe(
      "Stopping your answer in this channel…",
    );
    await x.settled(CHANNEL, bobs.threadTs);
    await x.settled(OTHER_CHANNEL, elsewhere.threadTs);
    expect(x.sim.control.runs().every((r) => r.status === "canceled")).toBe(true);
    expect(await ephemeralCommand(x, "stop")).toBe(
      "Nothing of yours is being answered in this channel right now.",
    );
  });
});

describe("the Stop button", () => {
  it("stops the run for the asker; anyone else is told who can, and the run goes on", async () => {
    const x = await harness();
    const { threadTs } = await askHanging(x, "written so far");
    const reply = lastReply(x, CHANNEL, threadTs);
    const turnId = stopTurnId(reply);
    expect(turnId).toBeDefined();

    const byBob = await x.pressStop({ turnId: turnId ?? "", user: BOB, messageTs: reply.ts });
    expect(byBob.status).toBe(200);
    expect(byBob.ms).toBeLessThan(3_000);
    await x.slack.waitFor((s) => s.ephemerals.length === 1);
    expect(x.slack.ephemerals[0]).toMatchObject({
      channel: CHANNEL,
      user: BOB,
      text: `Only <@${USER}> can stop this answer.`,
    });
    expect(stops(x)).toEqual([]);
    expect(x.sim.control.runs()[0]?.status).toBe("in_progress");
    expect(hasStopButton(lastReply(x, CHANNEL, threadTs))).toBe(true);

    const byAlice = await x.pressStop({ turnId: turnId ?? "", user: USER, messageTs: reply.ts });
    expect(byAlice.status).toBe(200);
    expect(await x.settled(CHANNEL, threadTs)).toEqual([
      `written so far\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
    ]);
    expect(stops(x)).toHaveLength(1);
    expect(x.sim.control.runs()[0]?.status).toBe("canceled");
    expect(runStarts(x).map((r) => Object.keys(r.body as object))).toEqual([["triggerMessageId"]]);

    // A press after the end changes nothing and says so.
    await x.pressStop({ turnId: turnId ?? "", user: USER, messageTs: reply.ts });
    await x.slack.waitFor((s) => s.ephemerals.length === 2);
    expect(x.slack.ephemerals[1]?.text).toBe("This answer has already finished.");
    expect(stops(x)).toHaveLength(1);
  });

  it("pressed while the run start is on its way, stops the run once the service names it", async () => {
    proxy = await startFaultProxy();
    const x = await harness({ env: { ASSISTANT_API_URL: proxy.url } });
    proxy.setTarget(x.sim.url);
    // The service creates the run, but its answer is kept from the bot until released.
    proxy.add({ method: "POST", path: /\/runs$/, action: "hold-response", count: 1 });
    x.sim.control.enqueueAnswer({ text: "begun", hang: true, tokensPerSecond: Infinity });
    const { threadTs } = await x.mention("<@UBOT> stop me early");
    await proxy.held();
    await x.slack.waitFor((s) => s.replies(CHANNEL, threadTs).some((m) => hasStopButton(m)));
    const reply = lastReply(x, CHANNEL, threadTs);
    const pressed = await x.pressStop({
      turnId: stopTurnId(reply) ?? "",
      user: USER,
      messageTs: reply.ts,
    });
    expect(pressed.status).toBe(200);
    expect(stops(x)).toEqual([]);

    proxy.release();
    const transcript = await x.settled(CHANNEL, threadTs);
    expect(transcript).toEqual([expect.stringContaining(`Stopped by <@${USER}>.`)]);
    const [run] = x.sim.control.runs();
    expect(stops(x).map((s) => s.path)).toEqual([`/v1/runs/${run?.id}/stop`]);
    expect(x.sim.control.runs().map((r) => r.status)).toEqual(["canceled"]);
    expect(runStarts(x)).toHaveLength(1);
  });
});

describe("after a restart", () => {
  it("the Stop button of an answer begun before it still stops that run", async () => {
    const x = await harness();
    const { threadTs } = await askHanging(x, "begun before");
    await x.slack.waitFor((s) =>
      (s.threadTranscript(CHANNEL, threadTs)[0] ?? "").includes("begun"),
    );
    const reply = lastReply(x, CHANNEL, threadTs);
    await x.restart();
    expect(await ephemeralCommand(x, "status")).toContain("being written");
    await x.pressStop({ turnId: stopTurnId(reply) ?? "", user: USER, messageTs: reply.ts });
    expect(await x.settled(CHANNEL, threadTs)).toEqual([
      `begun before\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
    ]);
    expect(runStarts(x)).toHaveLength(1);
    expect(x.sim.control.runs()[0]?.status).toBe("canceled");
  });
});

describe("/assistant status", () => {
  it("lists this person's answers in progress and queued, with links", async () => {
    const x = await harness();
    await ephemeralCommand(x, "model max");
    const running = await askHanging(x, "running now");
    // A later message in the same thread waits behind the running answer.
    await x.message({ text: "and then?", thread_ts: running.threadTs });
    // Its placeholder says it is queued.
    await x.slack.waitFor((s) => s.replies(CHANNEL, running.threadTs).length === 2);
    const [first, second] = x.slack.replies(CHANNEL, running.threadTs);

    const status = await ephemeralCommand(x, "status");
    const link = (ts = "") => `https://fake.slack/archives/${CHANNEL}/p${ts.replace(".", "")}`;
    expect(status.split("\n")).toEqual([
      "Your settings in this channel: model *max*, effort *default*, steps *default*.",
      "Assistant for new conversations here: *asst-e2e*.",
      "Your answers in progress here (2):",
      `• <${link(first?.ts)}|reply>: being written`,
      `• <${link(second?.ts)}|reply>: queued behind an earlier question`,
    ]);
    expect(await ephemeralCommand(x, "status", BOB)).toContain(
      "You have no answers in progress here.",
    );

    await ephemeralCommand(x, "stop");
    await x.settled(CHANNEL, running.threadTs, 2);
  });

  it("links the question of a queued turn whose placeholder could not be posted", async () => {
    const x = await harness();
    const running = await askHanging(x, "running now");
    x.slack.failNext("chat.postMessage", { error: "channel_not_found" });
    const queued = await x.message({ text: "and then?", thread_ts: running.threadTs });
    await x.slack.waitFor((s) => s.callsTo("chat.postMessage").some((c) => !c.ok));
    const status = await ephemeralCommand(x, "status");
    expect(status).toContain(
      `• <https://fake.slack/archives/${CHANNEL}/p${queued.ts.replace(".", "")}|question>: queued behind an earlier question`,
    );
    await ephemeralCommand(x, "stop");
    await x.settled(CHANNEL, running.threadTs, 2);
  });
});

describe("a stop of a queued turn", () => {
  it("removes a turn waiting behind an earlier one in its thread without reaching the service", async () => {
    const x = await harness();
    const { threadTs } = await askHanging(x, "first answer");
    await x.message({ text: "second question", thread_ts: threadTs });
    await x.slack.waitFor((s) => s.replies(CHANNEL, threadTs).length === 2);
    const [first, placeholder] = x.slack.replies(CHANNEL, threadTs);
    expect(x.slack.visibleText(placeholder ?? { text: "" })).toContain("Queued");
    const turnId = stopTurnId(placeholder ?? {}) ?? "";
    expect(await x.bot.bridge.activeFor(DEFAULT_TEAM, CHANNEL, USER)).toEqual([
      expect.objectContaining({ running: true }),
      expect.objectContaining({ running: false, turn: expect.objectContaining({ id: turnId }) }),
    ]);

    // Someone else's press changes nothing; the asker's ends it in its placeholder.
    await x.pressStop({ turnId, user: BOB, messageTs: placeholder?.ts ?? "" });
    await x.slack.waitFor((s) => s.ephemerals.length === 1);
    expect(x.slack.ephemerals[0]?.text).toBe(`Only <@${USER}> can stop this answer.`);
    expect(await x.bot.bridge.activeFor(DEFAULT_TEAM, CHANNEL, USER)).toHaveLength(2);
    await x.pressStop({ turnId, user: USER, messageTs: placeholder?.ts ?? "" });
    await x.slack.waitFor((s) => !hasStopButton(s.replies(CHANNEL, threadTs)[1] ?? {}));
    expect(x.slack.threadTranscript(CHANNEL, threadTs)[1]).toBe(
      `:black_square_for_stop: Stopped by <@${USER}>.`,
    );
    // The earlier answer goes on.
    expect(hasStopButton(x.slack.replies(CHANNEL, threadTs)[0] ?? {})).toBe(true);
    expect(await x.bot.bridge.activeFor(DEFAULT_TEAM, CHANNEL, USER)).toHaveLength(1);

    await x.pressStop({
      turnId: stopTurnId(first ?? {}) ?? "",
      user: USER,
      messageTs: first?.ts ?? "",
    });
    const transcript = await x.settled(CHANNEL, threadTs, 2);
    expect(transcript).toEqual([
      `first answer\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
      `:black_square_for_stop: Stopped by <@${USER}>.`,
    ]);
    expect(messagePosts(x).map((p) => p.body)).toEqual([{ content: "first answer?" }]);
    expect(runStarts(x)).toHaveLength(1);
  });

  it("by /assistant stop ends both the running turn and the one waiting behind it", async () => {
    const x = await harness();
    const { threadTs } = await askHanging(x, "running");
    // Stopped while its queued placeholder is still on its way (Slack said "wait a second").
    x.slack.failNext("chat.postMessage", { status: 429, retryAfter: 1 });
    await x.message({ text: "waiting", thread_ts: threadTs });
    await x.slack.waitFor((s) => s.callsTo("chat.postMessage").some((c) => c.status === 429));

    expect(await ephemeralCommand(x, "stop")).toBe("Stopping your 2 answers in this channel…");
    const transcript = await x.settled(CHANNEL, threadTs, 2);
    // One message per turn: the placeholder ends stopped, no second message beside it.
    expect(transcript).toEqual([
      `running\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
      `:black_square_for_stop: Stopped by <@${USER}>.`,
    ]);
    expect(messagePosts(x).map((p) => p.body)).toEqual([{ content: "running?" }]);
    expect(runStarts(x)).toHaveLength(1);
    expect(stops(x)).toHaveLength(1);
  });

  it("removes a turn waiting in the service budget without starting a run", async () => {
    const x = await harness({ env: { ASSISTANT_RUN_STARTS_PER_MINUTE: "1" } });
    const running = await askHanging(x, "takes the only start");
    const { threadTs } = await x.mention("<@UBOT> must wait");
    await x.slack.waitFor((s) =>
      (s.threadTranscript(CHANNEL, threadTs)[0] ?? "").includes("Queued"),
    );
    const queuedReply = lastReply(x, CHANNEL, threadTs);
    expect(hasStopButton(queuedReply)).toBe(true);
    const status = await ephemeralCommand(x, "status");
    expect(status).toContain("Your answers in progress here (2):");
    expect(status).toContain("reply>: waiting to start");

    await x.pressStop({
      turnId: stopTurnId(queuedReply) ?? "",
      user: USER,
      messageTs: queuedReply.ts,
    });
    expect(await ended(x, CHANNEL, threadTs)).toEqual([
      `:black_square_for_stop: Stopped by <@${USER}>.`,
    ]);
    expect(runStarts(x)).toHaveLength(1);
    // The running answer was not touched.
    expect(hasStopButton(lastReply(x, CHANNEL, running.threadTs))).toBe(true);

    await ephemeralCommand(x, "stop");
    await x.settled(CHANNEL, running.threadTs);
    expect(runStarts(x)).toHaveLength(1);
    expect(stops(x)).toHaveLength(1);
  });
});

describe("settings", () => {
  it("are read when the run starts, not when the question arrives", async () => {
    const x = await harness();
    const { threadTs } = await askHanging(x, "first");
    await x.message({ text: "second", thread_ts: threadTs });
    await x.slack.waitFor((s) => s.replies(CHANNEL, threadTs).length === 2);
    // Changed while the second question waits behind the first.
    await ephemeralCommand(x, "model max");
    await ephemeralCommand(x, "steps 9");
    const [running] = x.slack.replies(CHANNEL, threadTs);
    await x.pressStop({
      turnId: stopTurnId(running ?? {}) ?? "",
      user: USER,
      messageTs: running?.ts ?? "",
    });
    const transcript = await x.settled(CHANNEL, threadTs, 2);
    expect(transcript[0]).toBe(
      `first\n:black_square_for_stop: Stopped by <@${USER}>.\nModel: assistant-standard`,
    );
    expect(transcript[1]).toContain("Answered by assistant-max");
    const bodies = runStarts(x).map((r) => r.body as Record<string, unknown>);
    expect(bodies).toEqual([
      { triggerMessageId: bodies[0]?.triggerMessageId },
      { triggerMessageId: bodies[1]?.triggerMessageId, modelOverride: "max", maxSteps: 9 },
    ]);
  });
});
