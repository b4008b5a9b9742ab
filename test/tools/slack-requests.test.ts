import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { App, LogLevel } from "@slack/bolt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import {
  appMention,
  blockAction,
  eventEnvelope,
  feedbackPress,
  messageEvent,
  messageShortcut,
  nextTs,
  postToBot,
  signRequest,
  slashCommand,
  viewSubmission,
} from "../../tools/slack-requests.js";

const SECRET = "signing-secret";

describe("signRequest", () => {
  it("signs v0:<timestamp>:<body> with HMAC-SHA256 of the secret", () => {
    const body = '{"type":"event_callback"}';
    const expected = createHmac("sha256", SECRET).update(`v0:1700000000:${body}`).digest("hex");
    expect(signRequest(SECRET, body, 1_700_000_000)).toEqual({
      "x-slack-signature": `v0=${expected}`,
      "x-slack-request-timestamp": "1700000000",
      "content-type": "application/json",
    });
    expect(signRequest(SECRET, "a=b", 1)["content-type"]).toBe("application/x-www-form-urlencoded");
  });
});

describe("builders", () => {
  it("make unique increasing ts values", () => {
    const values = [nextTs(1_000), nextTs(1_000), nextTs(), nextTs()];
    expect(new Set(values).size).toBe(4);
    for (const ts of values) expect(ts).toMatch(/^\d+\.\d{6}$/);
    const sorted = [...values].sort((a, b) => Number(a) - Number(b));
    expect(values.slice(2)).toEqual(sorted.slice(2));
  });

  it("shape events as Slack does", () => {
    const mention = appMention({ channel: "C1", user: "U1", text: "<@UBOT> hi", thread_ts: "1.1" });
    expect(mention).toMatchObject({ type: "app_mention", channel: "C1", team: "T0001" });
    expect(mention.event_ts).toBe(mention.ts);
    const dm = messageEvent({
      channel: "D1",
      user: "U1",
      text: "x",
      channel_type: "im",
      bot_id: "B1",
    });
    expect(dm).toMatchObject({ type: "message", channel_type: "im", bot_id: "B1" });
    const envelope = eventEnvelope(mention, { eventId: "Ev1" });
    expect(envelope).toMatchObject({
      type: "event_callback",
      event_id: "Ev1",
      team_id: "T0001",
      event: mention,
      authorizations: [{ user_id: "UBOT", is_bot: true }],
    });
  });
});

describe("shared-channel events", () => {
  it("name the writer's team in the event and the installation in the envelope", () => {
    const event = messageEvent({
      channel: "C1",
      user: "U9",
      text: "hi",
      channel_type: "channel",
      userTeam: "TPARTNER",
    });
    expect(event).toMatchObject({
      team: "TPARTNER",
      user_team: "TPARTNER",
      source_team: "TPARTNER",
    });
    expect(eventEnvelope(event)).toMatchObject({
      team_id: "T0001",
      authorizations: [{ team_id: "T0001", enterprise_id: null }],
      is_ext_shared_channel: true,
    });
    const own = appMention({ channel: "C1", user: "U1", text: "hi" });
    expect(own).not.toHaveProperty("user_team");
    expect(eventEnvelope(own, { enterpriseId: "E0ORG" })).toMatchObject({
      is_ext_shared_channel: false,
      authorizations: [{ team_id: "T0001", enterprise_id: "E0ORG" }],
    });
  });

  it("carry the invoking person's Enterprise org in a slash command when given", () => {
    const fields = { text: "", user_id: "U1", channel_id: "C1", response_url: "http://x" };
    expect(slashCommand(fields)).not.toHaveProperty("enterprise_id");
    expect(slashCommand({ ...fields, team_id: "T9", enterprise_id: "E9" })).toMatchObject({
      team_id: "T9",
      enterprise_id: "E9",
    });
  });
});

describe("postToBot", () => {
  let captured: { headers: IncomingMessage["headers"]; body: string } | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      captured = { headers: req.headers, body: Buffer.concat(chunks).toString() };
      res.end("ok");
    });
  });
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;

  it("sends a verifiable signature and retry headers", async () => {
    const result = await postToBot(
      url(),
      SECRET,
      "event",
      appMention({ channel: "C1", user: "U1", text: "hi" }),
      {
        retryNum: 2,
        timestamp: 1_700_000_000,
      },
    );
    expect(result).toMatchObject({ status: 200, body: "ok" });
    expect(result.ms).toBeGreaterThanOrEqual(0);
    const headers = captured?.headers ?? {};
    const mac = createHmac("sha256", SECRET)
      .update(`v0:1700000000:${captured?.body}`)
      .digest("hex");
    expect(headers["x-slack-signature"]).toBe(`v0=${mac}`);
    expect(headers["x-slack-retry-num"]).toBe("2");
    expect(headers["x-slack-retry-reason"]).toBe("http_timeout");
    expect(headers["content-type"]).toBe("application/json");
    expect(JSON.parse(captured?.body ?? "")).toMatchObject({ type: "event_callback" });
  });

  it("form-encodes commands and payload=<json> for interactivity", async () => {
    const command = slashCommand({
      text: "model max",
      user_id: "U1",
      channel_id: "C1",
      response_url: "http://x",
    });
    await postToBot(url(), SECRET, "command", command);
    expect(captured?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(captured?.body))).toEqual(command);

    const action = blockAction({
      user: "U1",
      channel: "C1",
      message_ts: "1.2",
      action_id: "stop",
      value: "run_1",
    });
    await postToBot(url(), SECRET, "action", action);
    expect(JSON.parse(new URLSearchParams(captured?.body).get("payload") ?? "")).toEqual(action);
  });
});

describe("driving a real Bolt HTTP receiver", () => {
  let fake: FakeSlack;
  let app: App;
  let events: string;
  const seen: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    fake = await startFakeSlack();
    app = new App({
      token: "xoxb-test",
      signingSecret: SECRET,
      clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } },
      logLevel: LogLevel.ERROR,
    });
    app.event("app_mention", async ({ event, say, context }) => {
      seen.push({ kind: "mention", retryNum: context.retryNum });
      await say({ text: `echo ${event.text}`, thread_ts: event.thread_ts ?? event.ts });
    });
    app.command("/assistant", async ({ ack, respond, command }) => {
      await ack();
      await respond({ response_type: "ephemeral", text: `usage (${command.text})` });
    });
    app.action("stop", async ({ ack, body }) => {
      await ack();
      seen.push({ kind: "action", body });
    });
    app.action("feedback", async ({ ack, action }) => {
      await ack();
      seen.push({ kind: "feedback", action });
    });
    app.shortcut("summarize", async ({ ack, shortcut }) => {
      await ack();
      seen.push({ kind: "shortcut", callback_id: shortcut.callback_id });
    });
    app.view("settings", async ({ ack, view }) => {
      await ack();
      seen.push({ kind: "view", values: view.state.values });
    });
    const server = (await app.start({ port: 0, host: "127.0.0.1" })) as { address(): AddressInfo };
    events = `http://127.0.0.1:${server.address().port}/slack/events`;
  });
  afterAll(async () => {
    await app.stop();
    await fake.close();
  });

  it("acknowledges a signed mention and the bot replies in the thread", async () => {
    const mention = appMention({ channel: "C1", user: "U1", text: "<@UBOT> hello" });
    const result = await postToBot(events, SECRET, "event", mention, { retryNum: 1 });
    expect(result.status).toBe(200);
    await fake.waitFor((f) => f.callsTo("chat.postMessage").length === 1);
    expect(fake.threadTranscript("C1", mention.ts as string)).toEqual(["echo <@UBOT> hello"]);
    expect(seen.at(-1)).toEqual({ kind: "mention", retryNum: 1 });
  });

  it("is refused with a bad signature or a stale timestamp", async () => {
    const mention = appMention({ channel: "C1", user: "U1", text: "<@UBOT> x" });
    const bad = await postToBot(events, SECRET, "event", mention, { badSignature: true });
    const stale = Math.floor(Date.now() / 1000) - 600;
    const old = await postToBot(events, SECRET, "event", mention, { timestamp: stale });
    expect([bad.status, old.status]).toEqual([401, 401]);
  });

  it("delivers slash commands whose replies land on the fake's response URL", async () => {
    const responseUrl = fake.responseUrl();
    const command = slashCommand({
      text: "help",
      user_id: "U1",
      channel_id: "C1",
      response_url: responseUrl,
    });
    expect((await postToBot(events, SECRET, "command", command)).status).toBe(200);
    await fake.waitFor((f) => f.responses.length === 1);
    expect(fake.responses[0]?.body).toMatchObject({
      response_type: "ephemeral",
      text: "usage (help)",
    });
  });

  it("delivers block actions, message shortcuts and view submissions", async () => {
    const action = blockAction({
      user: "U1",
      channel: "C1",
      message_ts: "1.2",
      thread_ts: "1.1",
      action_id: "stop",
      value: "run_1",
    });
    expect((await postToBot(events, SECRET, "action", action)).status).toBe(200);
    expect(seen.at(-1)).toMatchObject({
      kind: "action",
      body: {
        actions: [{ value: "run_1" }],
        container: { message_ts: "1.2" },
        channel: { id: "C1" },
      },
    });
    const shortcut = messageShortcut({
      user: "U1",
      channel: "C1",
      callback_id: "summarize",
      message: { ts: "1.1", text: "long thread", user: "U2" },
    });
    expect((await postToBot(events, SECRET, "action", shortcut)).status).toBe(200);
    expect(seen.at(-1)).toEqual({ kind: "shortcut", callback_id: "summarize" });
    const values = {
      model: { pick: { type: "static_select", selected_option: { value: "max" } } },
    };
    const submission = viewSubmission({ user: "U1", callback_id: "settings", values });
    expect((await postToBot(events, SECRET, "view", submission)).status).toBe(200);
    expect(seen.at(-1)).toEqual({ kind: "view", values });
  });

  it("delivers a press of feedback buttons as Bolt's feedback_buttons action", async () => {
    const press = feedbackPress({
      user: "U1",
      channel: "C1",
      message_ts: "1.2",
      thread_ts: "1.1",
      action_id: "feedback",
      button: "negative",
      value: "turn-1:negative",
    });
    expect((await postToBot(events, SECRET, "action", press)).status).toBe(200);
    expect(seen.at(-1)).toEqual({
      kind: "feedback",
      action: {
        type: "feedback_buttons",
        action_id: "feedback",
        block_id: "context_actions",
        text: { type: "plain_text", text: "👎", emoji: true },
        value: "turn-1:negative",
        action_ts: expect.any(String),
      },
    });
    expect(press).toMatchObject({
      type: "block_actions",
      user: { id: "U1", team_id: "T0001" },
      channel: { id: "C1" },
      container: { message_ts: "1.2", thread_ts: "1.1" },
    });
  });
});
