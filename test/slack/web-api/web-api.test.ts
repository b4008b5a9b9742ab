import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { LogLevel, WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildReply, STOP_ACTION_ID } from "../../../src/slack/render/reply-blocks.js";
import { classifyCallFailure } from "../../../src/slack/web-api/call-failure.js";
import { questionMark, replyMark } from "../../../src/slack/web-api/message-mark.js";
import { findMarkedMessage, findUnmarkedReply } from "../../../src/slack/web-api/reply-lookup.js";
import {
  SlackResponseError,
  type SlackWebApi,
  slackWebApi,
} from "../../../src/slack/web-api/web-api.js";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

/** The bot's Web API adapters over a real WebClient, against the fake Slack on 127.0.0.1. */

const CHANNEL = "C0001";
const THREAD = "1700000000.000100";

/** A WebClient as the bot builds one, pointed at `apiUrl`, without retries or log noise. */
function webClient(apiUrl: string): WebClient {
  return new WebClient("xoxb-test-token", {
    slackApiUrl: apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    logLevel: LogLevel.ERROR,
  });
}

let fake: FakeSlack;
let slack: SlackWebApi;
beforeAll(async () => {
  fake = await startFakeSlack();
  slack = slackWebApi(webClient(fake.apiUrl));
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

describe("the Web API adapters against the fake Slack", () => {
  it("posts a reply in the thread with unfurls off, and gives back its ts", async () => {
    const posted = await slack.postMessage({ channel: CHANNEL, thread_ts: THREAD, text: "Hi" });
    const [call] = fake.callsTo("chat.postMessage");
    // The WebClient sends a form: booleans arrive as words.
    expect(call?.args).toMatchObject({
      channel: CHANNEL,
      thread_ts: THREAD,
      text: "Hi",
      unfurl_links: "false",
      unfurl_media: "false",
    });
    expect(fake.replies(CHANNEL, THREAD).map((m) => m.ts)).toEqual([posted.ts]);
  });

  it("lets a caller ask for unfurls", async () => {
    await slack.postMessage({ channel: CHANNEL, text: "see https://x.test", unfurl_links: true });
    expect(fake.callsTo("chat.postMessage")[0]?.args).toMatchObject({
      unfurl_links: "true",
      unfurl_media: "false",
    });
  });

  it("edits a reply's text and blocks, then deletes it", async () => {
    const first = buildReply({ body: "Hel", phase: { kind: "working" }, turnId: "t1" });
    const { ts } = await slack.postMessage({ channel: CHANNEL, thread_ts: THREAD, ...first });
    const final = buildReply({ body: "Hello.", phase: { kind: "completed" }, turnId: "t1" });
    await slack.updateMessage({ channel: CHANNEL, ts, ...final });
    expect(fake.replies(CHANNEL, THREAD)).toMatchObject([
      { ts, text: final.text, blocks: final.blocks, edits: 1 },
    ]);

    await slack.deleteMessage({ channel: CHANNEL, ts });
    expect(fake.replies(CHANNEL, THREAD)).toEqual([]);
  });

  it("whispers to one person, in the thread", async () => {
    await slack.postEphemeral({ channel: CHANNEL, user: "U1", thread_ts: THREAD, text: "psst" });
    expect(fake.ephemerals).toMatchObject([
      { channel: CHANNEL, user: "U1", thread_ts: THREAD, text: "psst" },
    ]);
  });

  it("links to a message", async () => {
    const { ts } = await slack.postMessage({ channel: CHANNEL, text: "here" });
    const link = await slack.getPermalink({ channel: CHANNEL, message_ts: ts });
    expect(link).toBe(`https://fake.slack/archives/${CHANNEL}/p${ts.replace(".", "")}`);
  });

  it("names a person by display name, else real name, else handle", async () => {
    fake.seedUser({ id: "U1", name: "ada", real_name: "Ada Lovelace", display_name: "Ada" });
    fake.seedUser({ id: "U2", name: "grace", real_name: "Grace Hopper" });
    fake.seedUser({ id: "U3", name: "alan" });
    const nameOf = async (id: string) => (await slack.userInfo(id)).displayName;
    expect(await nameOf("U1")).toBe("Ada");
    expect(await nameOf("U2")).toBe("Grace Hopper");
    expect(await nameOf("U3")).toBe("alan");
    expect(fake.callsTo("users.info").map((c) => c.args.user)).toEqual(["U1", "U2", "U3"]);
  });

  it("says a person's workspace and org, and whether they are a guest", async () => {
    fake.seedUser({ id: "U1", name: "ada" });
    fake.seedUser({ id: "U2", name: "gus", is_restricted: true });
    fake.seedUser({ id: "U3", name: "uma", is_ultra_restricted: true });
    fake.seedUser({ id: "U4", name: "pat", team_id: "TPARTNER", enterprise_id: "E0PARTNER" });
    expect(await slack.userInfo("U1")).toEqual({
      displayName: "ada",
      teamId: fake.teamId,
      enterpriseId: undefined,
      guest: false,
      admin: false,
    });
    expect((await slack.userInfo("U2")).guest).toBe(true);
    expect((await slack.userInfo("U3")).guest).toBe(true);
    expect(await slack.userInfo("U4")).toMatchObject({
      teamId: "TPARTNER",
      enterpriseId: "E0PARTNER",
      guest: false,
    });
  });

  it("says who the bot is", async () => {
    expect(await slack.authTest()).toEqual({
      userId: fake.botUserId,
      botId: fake.botId,
      teamId: fake.teamId,
      enterpriseId: undefined,
      url: "https://fake.slack/",
    });
  });

  it("says who is a workspace admin or owner", async () => {
    fake.seedUser({ id: "U5", name: "ann", is_admin: true });
    fake.seedUser({ id: "U6", name: "olga", is_owner: true });
    fake.seedUser({ id: "U7", name: "mo" });
    const admins = await Promise.all(["U5", "U6", "U7"].map((u) => slack.userInfo(u)));
    expect(admins.map((p) => p.admin)).toEqual([true, true, false]);
  });

  it("opens a modal for a trigger", async () => {
    await slack.openView({
      trigger_id: "trigger-1",
      view: { type: "modal", title: { type: "plain_text", text: "Ask" }, blocks: [] },
    });
    expect(fake.views).toMatchObject([{ trigger_id: "trigger-1", view: { type: "modal" } }]);
  });

  it("reads a thread page by page, by cursor", async () => {
    fake.seedMessage({ channel: CHANNEL, ts: THREAD, user: "U1", text: "question" });
    for (let i = 1; i <= 4; i++) {
      fake.seedMessage({
        channel: CHANNEL,
        ts: `1700000001.00000${i}`,
        thread_ts: THREAD,
        user: "U2",
        text: `reply ${i}`,
      });
    }
    const first = await slack.replies({ channel: CHANNEL, ts: THREAD, limit: 3 });
    expect(first.messages.map((m) => m.text)).toEqual(["question", "reply 1", "reply 2"]);
    expect(first.messages[0]).toMatchObject({ ts: THREAD, user: "U1" });
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await slack.replies({
      channel: CHANNEL,
      ts: THREAD,
      limit: 3,
      ...(first.nextCursor === undefined ? {} : { cursor: first.nextCursor }),
    });
    expect(second.messages.map((m) => m.text)).toEqual(["reply 3", "reply 4"]);
    expect(second.nextCursor).toBeUndefined();
  });

  it("finds a reply's messages by their invisible mark: the turn and the part", async () => {
    fake.seedMessage({ channel: CHANNEL, ts: THREAD, user: "U1", text: "question" });
    const where = { channel: CHANNEL, threadTs: THREAD };
    const ts: string[] = [];
    for (const index of [0, 1]) {
      const part = buildReply({
        body: `part ${index}`,
        phase: { kind: "continued" },
        turnId: "turn-7",
        part: { index },
      });
      ts.push((await slack.postMessage({ channel: CHANNEL, thread_ts: THREAD, ...part })).ts);
    }
    // The mark is metadata: nothing of it shows in the message.
    expect(fake.threadTranscript(CHANNEL, THREAD)).toEqual(["part 0", "part 1"]);
    expect(await findMarkedMessage(slack, { ...where, mark: replyMark("turn-7", 0) })).toBe(ts[0]);
    expect(await findMarkedMessage(slack, { ...where, mark: replyMark("turn-7", 1) })).toBe(ts[1]);
    expect(await findMarkedMessage(slack, { ...where, mark: replyMark("turn-7", 2) })).toBe(
      undefined,
    );
    expect(await findMarkedMessage(slack, { ...where, mark: replyMark("turn-8", 0) })).toBe(
      undefined,
    );
    expect(await findMarkedMessage(slack, { ...where, mark: questionMark("k") })).toBe(undefined);
    expect(fake.callsTo("conversations.replies")[0]?.args).toMatchObject({
      include_all_metadata: "true",
    });
  });

  it("finds a placeholder posted before marks existed by its Stop button", async () => {
    fake.seedMessage({ channel: CHANNEL, ts: THREAD, user: "U1", text: "question" });
    const { metadata: _unmarked, ...placeholder } = buildReply({
      body: "",
      phase: { kind: "starting" },
      turnId: "turn-7",
    });
    expect(JSON.stringify(placeholder.blocks)).toContain(STOP_ACTION_ID);
    const { ts } = await slack.postMessage({ channel: CHANNEL, thread_ts: THREAD, ...placeholder });
    const where = { channel: CHANNEL, threadTs: THREAD };
    expect(await findMarkedMessage(slack, { ...where, mark: replyMark("turn-7", 0) })).toBe(ts);
    expect(await findMarkedMessage(slack, { ...where, mark: replyMark("turn-7", 1) })).toBe(
      undefined,
    );
    expect(await findMarkedMessage(slack, { ...where, mark: replyMark("turn-8", 0) })).toBe(
      undefined,
    );
  });

  it("posts, edits and whispers nothing that notifies: mentions leave as their words", async () => {
    const loud = "Hey <!channel> <!here|here> <!everyone> <!subteam^S123|@team> <@U123>";
    const { ts } = await slack.postMessage({
      channel: CHANNEL,
      text: loud,
      blocks: [
        { type: "markdown", text: loud },
        { type: "context", elements: [{ type: "mrkdwn", text: `by <@U9> ${loud}` }] },
      ],
    });
    await slack.updateMessage({
      channel: CHANNEL,
      ts,
      text: loud,
      blocks: [{ type: "section", text: { type: "mrkdwn", text: loud } }],
    });
    await slack.postEphemeral({ channel: CHANNEL, user: "U1", text: loud });
    const sent = JSON.stringify(fake.calls.map((c) => c.args));
    expect(sent).not.toMatch(/<!/);
    const [post, update] = [fake.callsTo("chat.postMessage")[0], fake.callsTo("chat.update")[0]];
    // The assistant's Markdown mentions no one; the bot's own mrkdwn may name a person.
    expect(post?.args.blocks).toEqual([
      { type: "markdown", text: "Hey @channel @here @everyone @team @U123" },
      {
        type: "context",
        elements: [{ type: "mrkdwn", text: "by <@U9> Hey @channel @here @everyone @team <@U123>" }],
      },
    ]);
    expect(update?.args.text).toBe("Hey @channel @here @everyone @team <@U123>");
  });

  it("streams a reply whose chunks notify nobody, stops it with its mark, and finds it unmarked before", async () => {
    const { ts } = await slack.startStream({
      channel: CHANNEL,
      thread_ts: THREAD,
      recipient_user_id: "U1",
      recipient_team_id: "T0001",
      chunks: [
        { type: "task_update", id: "s1", title: "Ask <!here>", status: "in_progress" },
        { type: "markdown_text", text: "Hi <!channel> and <@U2|ada> " },
      ],
    });
    await slack.appendStream({
      channel: CHANNEL,
      ts,
      chunks: [{ type: "markdown_text", text: "then <!subteam^S1|@team>." }],
    });
    expect(fake.threadTranscript(CHANNEL, THREAD)).toEqual([
      "Ask @here\nHi @channel and @ada then @team.",
    ]);
    const where = { channel: CHANNEL, threadTs: THREAD, after: THREAD, botId: fake.botId };
    expect(await findUnmarkedReply(slack, where)).toBe(ts);
    expect(await findUnmarkedReply(slack, { ...where, after: ts })).toBeUndefined();
    await slack.stopStream({ channel: CHANNEL, ts, metadata: replyMark("t9", 0) });
    expect(await findUnmarkedReply(slack, where)).toBeUndefined();
    expect(await findMarkedMessage(slack, { ...where, mark: replyMark("t9", 0) })).toBe(ts);
  });

  it("leaves Slack's refusals as the WebClient's errors, told apart as before", async () => {
    fake.failNext("chat.postMessage", { status: 200, error: "not_in_channel" });
    const refused = await slack.postMessage({ channel: CHANNEL, text: "x" }).catch((e) => e);
    expect(classifyCallFailure(refused)).toEqual({ kind: "permanent", reason: "not_in_channel" });

    fake.failNext("chat.update", { status: 429, retryAfter: 3 });
    const limited = await slack
      .updateMessage({ channel: CHANNEL, ts: THREAD, text: "x" })
      .catch((e) => e);
    expect(classifyCallFailure(limited)).toEqual({ kind: "rate_limited", retryAfterMs: 3_000 });

    const unknown = await slack.userInfo("U404").catch((e) => e);
    expect(classifyCallFailure(unknown)).toEqual({ kind: "permanent", reason: "user_not_found" });
  });
});

/** A "Slack" that answers every method with `ok: true` and the body the test sets. */
async function startMalformedSlack() {
  let body: Record<string, unknown> = {};
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: true, ...body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    slack: slackWebApi(webClient(`http://127.0.0.1:${port}/api/`)),
    answer: (next: Record<string, unknown>) => {
      body = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("answers the bot cannot use", () => {
  let malformed: Awaited<ReturnType<typeof startMalformedSlack>>;
  beforeAll(async () => {
    malformed = await startMalformedSlack();
  });
  afterAll(() => malformed.close());

  async function failureOf(call: () => Promise<unknown>): Promise<SlackResponseError> {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlackResponseError);
    return error as SlackResponseError;
  }

  it("fails a post without a ts clearly, and never as something to send again", async () => {
    malformed.answer({ channel: CHANNEL });
    const error = await failureOf(() =>
      malformed.slack.postMessage({ channel: CHANNEL, text: "x" }),
    );
    expect(error.method).toBe("chat.postMessage");
    expect(error.message).toMatch(/^Slack's answer to chat\.postMessage was not understood: ts: /);
    expect(classifyCallFailure(error)).toEqual({ kind: "permanent", reason: "invalid_response" });

    malformed.answer({ ts: 1700000000.0001 });
    await failureOf(() => malformed.slack.postMessage({ channel: CHANNEL, text: "x" }));
  });

  it("fails every other answer it reads when a field it needs is missing or wrong", async () => {
    malformed.answer({ permalink: "" });
    expect(
      (
        await failureOf(() =>
          malformed.slack.getPermalink({ channel: CHANNEL, message_ts: THREAD }),
        )
      ).method,
    ).toBe("chat.getPermalink");

    malformed.answer({ user_id: "UBOT", bot_id: "BBOT" });
    expect((await failureOf(() => malformed.slack.authTest())).message).toContain("team_id");

    malformed.answer({ user: "U1" });
    expect((await failureOf(() => malformed.slack.userInfo("U1"))).method).toBe("users.info");

    malformed.answer({ messages: "none" });
    const page = await failureOf(() =>
      malformed.slack.replies({ channel: CHANNEL, ts: THREAD, limit: 10 }),
    );
    expect(page.message).toContain("messages");

    malformed.answer({ messages: [], response_metadata: { next_cursor: 42 } });
    await failureOf(() => malformed.slack.replies({ channel: CHANNEL, ts: THREAD, limit: 10 }));
  });

  it("does not put a value from the answer in the error", async () => {
    malformed.answer({ user_id: "secret-looking-value", team_id: 12345 });
    const error = await failureOf(() => malformed.slack.authTest());
    expect(error.message).not.toContain("secret-looking-value");
    expect(error.message).not.toContain("12345");
  });

  it("leaves out a message it cannot read, and keeps the rest of the page", async () => {
    malformed.answer({
      messages: [
        { text: "no ts" },
        { ts: THREAD, user: "U1", text: "fine", blocks: "not blocks" },
        { ts: "1700000001.000001", user: "U2" },
      ],
      has_more: false,
      response_metadata: { next_cursor: "" },
    });
    const page = await malformed.slack.replies({ channel: CHANNEL, ts: THREAD, limit: 10 });
    expect(page.messages.map((m) => [m.ts, m.text, m.blocks])).toEqual([
      [THREAD, "fine", undefined],
      ["1700000001.000001", "", undefined],
    ]);
    expect(page.nextCursor).toBeUndefined();
  });

  it("takes a person with no name at all as nameless, not as an error", async () => {
    malformed.answer({
      user: { id: "U1", name: "", profile: { display_name: "", real_name: "" } },
    });
    expect((await malformed.slack.userInfo("U1")).displayName).toBeUndefined();
  });
});
