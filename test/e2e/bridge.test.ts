import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_TEAM } from "../../tools/slack-events.js";
import { appMention, eventEnvelope, messageEvent } from "../../tools/slack-requests.js";
import {
  CHANNEL,
  type Harness,
  hasStopButton,
  startHarness,
  USER,
} from "../support/bridge-harness.js";

let h: Harness | undefined;
const extra: Server[] = [];

async function harness(options: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  h = await startHarness(options);
  return h;
}

afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const server of extra.splice(0)) await new Promise((r) => server.close(r));
});

const messageBodies = (x: Harness) =>
  x.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/messages$/).map((r) => r.body);
const runStarts = (x: Harness) => x.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/runs$/);

describe("Slack requests", () => {
  it("refuses a request with a wrong signature before any work", async () => {
    const x = await harness();
    const event = appMention({ channel: CHANNEL, user: USER, text: "<@UBOT> hi" });
    const refused = await x.post("event", event, { badSignature: true });
    expect(refused.status).toBe(401);
    const stale = await x.post("event", event, { timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(stale.status).toBe(401);
    expect(x.sim.control.requests).toEqual([]);
    expect(x.slack.callsTo("chat.postMessage")).toEqual([]);
  });

  it("acknowledges an event at once, before the answer is written", async () => {
    const x = await harness({ simulator: { answer: { tokensPerSecond: 20 } } });
    x.sim.control.enqueueAnswer({ text: "slow ".repeat(16).trim() });
    const { response, threadTs, ts } = await x.mention("<@UBOT> take your time");
    expect(response.status).toBe(200);
    // HTTP mode answers Slack only once the question is recorded: a crash cannot lose it.
    expect(await x.bot.stores.turns.byMessage(DEFAULT_TEAM, CHANNEL, ts)).toBeDefined();
    // The answer is still being written when the acknowledgement arrives.
    expect(x.slack.replies(CHANNEL, threadTs).every((m) => !m.text.includes("slow slow"))).toBe(
      true,
    );
    await x.settled(CHANNEL, threadTs);
  });

  it("answers one Slack message once, whether it arrives as app_mention, message or a retry", async () => {
    const x = await harness();
    x.sim.control.enqueueAnswer({ text: "Only once." });
    const ts = x.slack.nextTs();
    x.slack.seedMessage({ channel: CHANNEL, ts, user: USER, text: "<@UBOT> once?" });
    const fields = { channel: CHANNEL, user: USER, text: "<@UBOT> once?", ts };
    const mention = eventEnvelope(appMention(fields), { eventId: "Ev1" });
    await x.post("event", mention);
    await x.post("event", messageEvent({ ...fields, channel_type: "channel" }));
    await x.post("event", mention, { retryNum: 1 });
    await x.post("event", mention, { retryNum: 2 });
    const transcript = await x.settled(CHANNEL, ts);
    expect(transcript).toHaveLength(1);
    expect(transcript[0]).toContain("Only once.");
    expect(messageBodies(x)).toEqual([{ content: "once?" }]);
    expect(runStarts(x)).toHaveLength(1);
  });

  it("ignores messages with a subtype or a bot_id, and the bot's own messages", async () => {
    const x = await harness();
    const { threadTs } = await x.mention("<@UBOT> start");
    await x.settled(CHANNEL, threadTs);
    await x.message({ text: "edited", thread_ts: threadTs, subtype: "message_changed" });
    await x.message({ text: "from a bot", thread_ts: threadTs, bot_id: "B999" });
    await x.message({ text: "from me", thread_ts: threadTs, user: "UBOT" });
    await x.bot.bridge.idle();
    expect(messageBodies(x)).toEqual([{ content: "start" }]);
  });
});

describe("conversations", () => {
  it("continues a thread without a new mention, on the same service thread", async () => {
    const x = await harness();
    x.sim.control.enqueueAnswer({ text: "First answer." });
    x.sim.control.enqueueAnswer({ text: "Second answer." });
    const { threadTs } = await x.mention("<@UBOT> first");
    await x.settled(CHANNEL, threadTs);
    await x.message({ text: "and then?", thread_ts: threadTs });
    const transcript = await x.settled(CHANNEL, threadTs, 2);
    expect(transcript).toHaveLength(2);
    expect(transcript[0]).toContain("First answer.");
    expect(transcript[1]).toContain("Second answer.");
    const paths = x.serviceRequests("POST", /\/messages$/).map((r) => r.path);
    expect(new Set(paths).size).toBe(1);
    expect(x.serviceRequests("POST", /^\/v1\/threads?$/)).toHaveLength(1);
    expect(x.serviceRequests("POST", /^\/v1\/threads?$/)[0]?.body).toEqual({
      assistantId: "asst-e2e",
    });
  });

  it("does not answer a thread message where the bot has no conversation", async () => {
    const x = await harness();
    const parent = x.slack.nextTs();
    x.slack.seedMessage({ channel: CHANNEL, ts: parent, user: USER, text: "people talking" });
    await x.message({ text: "no mention here", thread_ts: parent });
    await x.message({ text: "top-level chatter" });
    await x.bot.bridge.idle();
    expect(x.sim.control.requests).toEqual([]);
    expect(x.slack.callsTo("chat.postMessage")).toEqual([]);
  });

  it("answers messages sent while an answer is written next, in order", async () => {
    const x = await harness({ simulator: { answer: { tokensPerSecond: 100 } } });
    // Long enough that the third question's reply is posted (a second after the second's,
    // at the channel's posting pace) while the first answer is still being written.
    x.sim.control.enqueueAnswer({ text: "Answer one. ".repeat(100).trim() });
    x.sim.control.enqueueAnswer({ text: "Answer two." });
    x.sim.control.enqueueAnswer({ text: "Answer three." });
    const { threadTs } = await x.mention("<@UBOT> one");
    await x.message({ text: "two", thread_ts: threadTs });
    await x.message({ text: "three", thread_ts: threadTs });
    const transcript = await x.settled(CHANNEL, threadTs, 3);
    expect(transcript).toHaveLength(3);
    expect(transcript[0]).toContain("Answer one. Answer one.");
    expect(transcript[1]).toContain("Answer two.");
    expect(transcript[2]).toContain("Answer three.");
    expect(messageBodies(x)).toEqual([
      { content: "one" },
      { content: "two" },
      { content: "three" },
    ]);
    // The later questions got a placeholder at once, saying they wait their turn.
    const [, second, third] = x.slack.replies(CHANNEL, threadTs);
    expect(x.slack.visibleText(second?.history[0] ?? { text: "" })).toMatch(/Queued — 1 ahead/);
    expect(x.slack.visibleText(third?.history[0] ?? { text: "" })).toMatch(/Queued — 2 ahead/);
    // One turn at a time: each run starts after the bot read the previous run's end.
    const runs = x.sim.control.runs();
    expect(runs).toHaveLength(3);
    const requests = x.sim.control.requests;
    for (let k = 1; k < runs.length; k++) {
      const previous = runs[k - 1]?.id ?? "";
      const lastReadOfPrevious = requests.findLastIndex((r) => r.path === `/v1/run/${previous}`);
      const startOfThis = requests.findIndex(
        (r) =>
          r.method === "POST" &&
          r.path.endsWith("/runs") &&
          (r.body as { triggerMessageId?: string }).triggerMessageId === runs[k]?.triggerMessageId,
      );
      expect(lastReadOfPrevious).toBeGreaterThan(-1);
      expect(startOfThis).toBeGreaterThan(lastReadOfPrevious);
    }
  });

  it("answers every DM; a top-level DM starts a new conversation, a thread reply continues it", async () => {
    const x = await harness();
    const dm = "D0DIRECT";
    const first = await x.message({ text: "hello there", channel: dm, channel_type: "im" });
    await x.settled(dm, first.threadTs);
    await x.message({ text: "more", channel: dm, channel_type: "im", thread_ts: first.threadTs });
    await x.settled(dm, first.threadTs, 2);
    const second = await x.message({ text: "new topic", channel: dm, channel_type: "im" });
    await x.settled(dm, second.threadTs);
    expect(messageBodies(x)).toEqual([
      { content: "hello there" },
      { content: "more" },
      { content: "new topic" },
    ]);
    expect(x.sim.control.counts().threads).toBe(2);
    // Replies are in the thread of the message answered.
    for (const call of x.slack.callsTo("chat.postMessage")) {
      expect([first.threadTs, second.threadTs]).toContain(call.args.thread_ts);
    }
  });

  it("passes Slack markup on as readable text without the bot's mention", async () => {
    const x = await harness();
    x.slack.seedUser({ id: "U0BOB", name: "bob", real_name: "Bob Builder" });
    const { threadTs } = await x.mention(
      "<@UBOT>  ask <@U0BOB> about <#C0PLAN|planning> and <https://example.com/a?b=1&amp;c=2|the doc> &amp; more &lt;3 ",
    );
    await x.settled(CHANNEL, threadTs);
    const [body] = messageBodies(x) as { content: string }[];
    expect(body?.content).toBe(
      "ask @Bob Builder about #planning and the doc (https://example.com/a?b=1&c=2) & more <3",
    );
  });

  it("says an image is not passed on, and answers the text", async () => {
    const x = await harness();
    x.sim.control.enqueueAnswer({ text: "About your text." });
    const { threadTs } = await x.mention("<@UBOT> look at this", {
      files: [{ id: "F1", name: "chart.png", mimetype: "image/png" }],
    });
    const [reply] = await x.settled(CHANNEL, threadTs);
    expect(reply).toBe(
      [
        "About your text.",
        "Answered by assistant-standard",
        "Not passed on to the assistant: chart.png (the assistant service does not take images).",
      ].join("\n"),
    );
    expect(messageBodies(x)).toEqual([{ content: "look at this" }]);
  });
});

describe("the reply", () => {
  it("shows progress, then the complete answer with the model, and drops the Stop button", async () => {
    const x = await harness({ simulator: { answer: { tokensPerSecond: 40 } } });
    const answer = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the answer.`).join("\n");
    x.sim.control.enqueueAnswer({ text: answer, modelUsed: "max" });
    const { threadTs } = await x.mention("<@UBOT> count");
    const [reply] = await x.settled(CHANNEL, threadTs);
    const [message] = x.slack.replies(CHANNEL, threadTs);
    expect(reply).toContain(answer);
    expect(reply).toContain("max");
    expect(hasStopButton(message ?? {})).toBe(false);
    // Interim versions carried the Stop button and part of the text; the first edit after
    // the placeholder already shows text (no status-only edit spends the edit budget).
    const history = message?.history ?? [];
    expect(x.slack.visibleText(history[1] ?? { text: "" })).toMatch(/^Line/);
    expect(history.length).toBeGreaterThan(2);
    expect(history.some((v) => hasStopButton(v) && x.slack.visibleText(v).includes("Line 1"))).toBe(
      true,
    );
    expect(x.slack.rateLimited).toBe(0);
  });

  it("continues a long answer in further messages, split outside code blocks", async () => {
    const x = await harness({
      simulator: { answer: { tokensPerSecond: Number.POSITIVE_INFINITY } },
    });
    const paragraph = (i: number) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(16)}`;
    const code = `\`\`\`js\n${Array.from({ length: 60 }, (_, i) => `const v${i} = ${i};`).join("\n")}\n\`\`\``;
    const answer = [
      ...Array.from({ length: 10 }, (_, i) => paragraph(i)),
      code,
      ...Array.from({ length: 10 }, (_, i) => paragraph(i + 10)),
    ].join("\n\n");
    expect(answer.length).toBeGreaterThan(8_000);
    x.sim.control.enqueueAnswer({ text: answer });
    const { threadTs } = await x.mention("<@UBOT> write a lot");
    const transcript = await x.settled(CHANNEL, threadTs, 2);
    expect(transcript.length).toBeGreaterThanOrEqual(2);
    const bodies = x.slack.replies(CHANNEL, threadTs).map((m) => {
      const block = (m.blocks ?? []).find((b) => (b as { type?: string }).type === "markdown") as
        | { text: string }
        | undefined;
      return block?.text ?? "";
    });
    expect(bodies.join("\n")).toBe(answer);
    for (const body of bodies) {
      expect(body.length).toBeLessThanOrEqual(12_000);
      // Every part has balanced code fences.
      expect((body.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
  });

  it("ends with the run's error when the run fails", async () => {
    const x = await harness();
    x.sim.control.enqueueAnswer({
      text: "Partial words",
      fail: "tool crashed",
      failAfterChars: 8,
      modelUsed: "assistant-flash",
    });
    const { threadTs } = await x.mention("<@UBOT> fail please");
    const [reply] = await x.settled(CHANNEL, threadTs);
    expect(reply).toContain("tool crashed");
    expect(reply).toContain("Model: assistant-flash");
    expect(x.slack.replies(CHANNEL, threadTs).every((m) => !hasStopButton(m))).toBe(true);
  });

  it("ends with one clear sentence when the service cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const x = await harness({
      env: { ASSISTANT_API_URL: `http://127.0.0.1:${port}`, SERVICE_OUTAGE_SECONDS: "1" },
    });
    const { threadTs } = await x.mention("<@UBOT> anyone there?");
    const [reply] = await x.settled(CHANNEL, threadTs, 1, 15_000);
    expect(reply).toMatch(/could not be reached/);
    expect(reply).not.toMatch(/Working|Starting/);
  });

  it("ends with one clear sentence when the service answers garbage", async () => {
    const garbage = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"this is": not json');
    });
    extra.push(garbage);
    await new Promise<void>((r) => garbage.listen(0, "127.0.0.1", r));
    const port = (garbage.address() as AddressInfo).port;
    const x = await harness({
      env: { ASSISTANT_API_URL: `http://127.0.0.1:${port}`, SERVICE_OUTAGE_SECONDS: "1" },
    });
    const { threadTs } = await x.mention("<@UBOT> hello?");
    const [reply] = await x.settled(CHANNEL, threadTs, 1, 15_000);
    expect(reply).toMatch(/could not read/);
  });

  it("ends with one sentence when the service refuses the question, the details in the log", async () => {
    const x = await harness();
    x.sim.control.failRequests({
      count: 1,
      status: 400,
      method: "POST",
      pathPattern: /^\/v1\/thread\/[^/]+\/messages$/,
    });
    const { threadTs } = await x.mention("<@UBOT> this one is refused");
    const [reply] = await x.settled(CHANNEL, threadTs);
    expect(reply).toBe(
      ":warning: The assistant service refused this request, so this message was not answered; the bot's log says why.",
    );
    const refused = x.serviceRequests("POST", /^\/v1\/thread\/[^/]+\/messages$/)[0]?.path;
    const threadId = refused?.split("/")[3] as string;
    expect(threadId.length).toBeGreaterThan(0);
    for (const detail of ["POST", "/v1", threadId, "400"]) expect(reply).not.toContain(detail);
    const logged = x.logs.find((line) => line.includes("turn ended with an error")) ?? "";
    expect(JSON.parse(logged).err).toMatchObject({
      kind: "bad_request",
      status: 400,
      method: "POST",
      path: expect.stringMatching(/^\/v1\/thread\/[^/]+\/messages$/),
    });
  });

  it("notifies nobody: the mentions an answer writes reach Slack as their words", async () => {
    const x = await harness({ simulator: { answer: { tokensPerSecond: 200 } } });
    const answer = [
      "Heads up <!channel>, <!here|here> and <!everyone>!",
      "Ask <!subteam^S123|@team> or <@U123>, by <!date^1392734382^{date_short}|Feb 18, 2014>.",
    ].join("\n");
    x.sim.control.enqueueAnswer({ text: answer });
    const { threadTs } = await x.mention("<@UBOT> who should know?");
    const [reply] = await x.settled(CHANNEL, threadTs);
    // Every payload the bot sent, every field, interim edits included.
    const sent = x.slack.calls
      .filter((c) => c.method.startsWith("chat."))
      .map((c) => JSON.stringify(c.args));
    expect(sent.length).toBeGreaterThan(1);
    for (const payload of sent) {
      expect(payload).not.toMatch(/<!|<@U123/);
    }
    expect(reply).toContain(
      "Heads up @channel, @here and @everyone!\nAsk @team or @U123, by Feb 18, 2014.",
    );
  });

  it("shows a turn waiting for the service's run-start budget as queued", async () => {
    const x = await harness({ env: { ASSISTANT_RUN_STARTS_PER_MINUTE: "1" } });
    const first = await x.mention("<@UBOT> first", { channel: "C0ONE" });
    await x.settled("C0ONE", first.threadTs);
    const second = await x.mention("<@UBOT> second", { channel: "C0TWO" });
    await x.slack.waitFor((s) =>
      s.replies("C0TWO", second.threadTs).some((m) => /Queued/.test(s.visibleText(m))),
    );
    const [reply] = x.slack.threadTranscript("C0TWO", second.threadTs);
    expect(reply).toMatch(/Queued — next in line/);
    // The second run has not started: only one run start so far.
    expect(runStarts(x)).toHaveLength(1);
    await x.bot.bridge.stopAllFor("T0001", "C0TWO", USER);
    await x.settled("C0TWO", second.threadTs);
    expect(runStarts(x)).toHaveLength(1);
  });

  it("writes fifty answers at once in one workspace without a Slack 429", async () => {
    // Slack's Tier 3 (50 edits a minute) and the service's run starts (20 a minute) scaled
    // up tenfold on both sides, so the test takes seconds rather than minutes while the
    // pacer still has to share one workspace budget between all fifty answers.
    const x = await harness({
      simulator: {
        answer: { tokensPerSecond: 60, length: 400 },
        limits: { runStartsPerMinute: 200 },
      },
      slack: { limits: { "chat.update": 500 } },
      // One person asks all fifty: the per-person cap (default 5) is raised to let them.
      env: {
        SLACK_UPDATES_PER_MINUTE: "400",
        ASSISTANT_RUN_STARTS_PER_MINUTE: "200",
        MAX_QUEUED_TURNS_PER_PERSON: "50",
      },
    });
    const threads = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        x.mention(`<@UBOT> question ${i}`, { channel: `C${i}`, user: `U0PERSON${i}` }),
      ),
    );
    await x.slack.waitFor(
      (s) =>
        threads.every(
          ({ threadTs }, i) =>
            s.replies(`C${i}`, threadTs).length > 0 &&
            s.replies(`C${i}`, threadTs).every((m) => !hasStopButton(m)),
        ),
      60_000,
    );
    await x.bot.bridge.idle();
    expect(x.slack.rateLimited).toBe(0);
    expect(x.sim.control.runs()).toHaveLength(50);
    // Every answer is exact.
    for (const [i, { threadTs }] of threads.entries()) {
      const thread = x.sim.control.threads().find((t) => hasQuestion(x, t.id, i));
      const run = x.sim.control.runs().find((r) => r.threadId === thread?.id);
      const [reply] = x.slack.threadTranscript(`C${i}`, threadTs);
      expect(run?.output?.[0]?.text).toBeTruthy();
      expect(reply).toContain(run?.output?.[0]?.text);
    }
  }, 90_000);
});

function hasQuestion(x: Harness, threadId: string, i: number): boolean {
  return x.sim.control.messages(threadId).some((m) => m.content === `question ${i}`);
}
