import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { NOT_RECORDED_NOTE } from "../../src/slack/surfaces/shortcut.js";
import { messageShortcut, nextTs, viewSubmission } from "../../tools/slack-requests.js";
import { CHANNEL, type Harness, startHarness, USER } from "../support/bridge-harness.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
  h.slack.seedUser({ id: USER, name: "alice", display_name: "Alice" });
  h.slack.seedUser({ id: "U0BOB", name: "bob", display_name: "Bob" });
  h.slack.seedUser({ id: "U0CAROL", name: "carol", display_name: "Carol" });
});
afterEach(async () => {
  vi.restoreAllMocks();
  await h.close();
});

const contents = () =>
  h
    .serviceRequests("POST", /^\/v1\/thread\/[^/]+\/messages$/)
    .map((r) => (r.body as { content: string }).content);

/** A thread of two people's messages; the shortcut is used on the reply. */
function seedThread() {
  const parent = nextTs();
  h.slack.seedMessage({ channel: CHANNEL, ts: parent, user: "U0BOB", text: "Ship on Friday?" });
  const reply = nextTs();
  const text = "Only if <@U0BOB> gets QA &amp; docs done";
  h.slack.seedMessage({ channel: CHANNEL, ts: reply, thread_ts: parent, user: "U0CAROL", text });
  return { parent, reply, text };
}

/** Uses the shortcut on a message and returns the modal the bot opened. */
async function openModal(message: { ts: string; text: string; user: string; thread_ts?: string }) {
  const before = h.slack.views.length;
  const response = await h.post(
    "action",
    messageShortcut({ user: USER, channel: CHANNEL, callback_id: "ask_assistant", message }),
  );
  expect(response.status).toBe(200);
  await h.slack.waitFor((s) => s.views.length > before);
  return h.slack.views.at(-1) as NonNullable<(typeof h.slack.views)[number]>;
}

function submit(privateMetadata: string, question: string) {
  return h.post(
    "action",
    viewSubmission({
      user: USER,
      callback_id: "ask_assistant_question",
      private_metadata: privateMetadata,
      values: { question: { question: { type: "plain_text_input", value: question } } },
    }),
  );
}

describe("the Ask the assistant shortcut", () => {
  it("opens a modal quoting the message, and answers the submitted question in its thread", async () => {
    h.sim.control.enqueueAnswer({ text: "Carol wants QA and docs first." });
    const { parent, reply, text } = seedThread();
    const opened = await openModal({ ts: reply, text, user: "U0CAROL", thread_ts: parent });
    const view = opened.view as {
      callback_id: string;
      private_metadata: string;
      blocks: unknown[];
    };
    expect(view.callback_id).toBe("ask_assistant_question");
    expect(JSON.stringify(view.blocks)).toContain(`<@U0CAROL> wrote:\\n>${text}`);
    expect(JSON.stringify(view.blocks)).toContain('"block_id":"question"');
    expect(JSON.parse(view.private_metadata)).toEqual({
      channel: CHANNEL,
      threadTs: parent,
      messageTs: reply,
    });

    const response = await submit(view.private_metadata, "  What is Carol asking for?  ");
    expect(response.status).toBe(200);
    expect(response.body).toBe("");

    const transcript = await h.settled(CHANNEL, parent, 2);
    const [asked, answer] = h.slack.replies(CHANNEL, parent);
    expect(asked?.text).toBe(`<@${USER}> asked: What is Carol asking for?`);
    expect(answer?.thread_ts).toBe(parent);
    expect(transcript[1]).toContain("Carol wants QA and docs first.");
    expect(contents()).toEqual([
      [
        "Earlier messages in this Slack thread, oldest first:",
        "",
        "Bob: Ship on Friday?",
        "Carol: Only if @Bob gets QA & docs done",
        "",
        "---",
        "",
        "Question from Alice:",
        "What is Carol asking for?",
      ].join("\n"),
    ]);

    // The thread now has a conversation: a plain reply continues it, and neither the posted
    // question nor the answer is passed on again.
    await h.message({ text: "and after that?", thread_ts: parent });
    await h.settled(CHANNEL, parent, 3);
    expect(contents()[1]).toBe("and after that?");
    expect(h.sim.control.counts().threads).toBe(1);
  });

  it("posts the question once when Slack takes it but answers 500", async () => {
    h.sim.control.enqueueAnswer({ text: "Yes." });
    const ts = nextTs();
    h.slack.seedMessage({ channel: CHANNEL, ts, user: "U0BOB", text: "Budget is 10k" });
    const opened = await openModal({ ts, text: "Budget is 10k", user: "U0BOB" });
    const metadata = (opened.view as { private_metadata: string }).private_metadata;
    h.slack.failNext("chat.postMessage", { status: 500, landed: true });
    await submit(metadata, "Is that enough?");
    await h.settled(CHANNEL, ts, 2);
    const texts = h.slack.replies(CHANNEL, ts).map((m) => m.text);
    expect(texts.filter((t) => t.includes("asked:"))).toEqual([
      `<@${USER}> asked: Is that enough?`,
    ]);
    expect(texts).toHaveLength(2);
    expect(contents()).toHaveLength(1);
  });

  it("tells the person when the question it posted cannot be recorded", async () => {
    const ts = nextTs();
    h.slack.seedMessage({ channel: CHANNEL, ts, user: "U0BOB", text: "Budget is 10k" });
    const opened = await openModal({ ts, text: "Budget is 10k", user: "U0BOB" });
    const metadata = (opened.view as { private_metadata: string }).private_metadata;
    vi.spyOn(h.bot.stores.turns, "record").mockImplementationOnce(() => {
      throw new Database.SqliteError("database or disk is full", "SQLITE_FULL");
    });
    await submit(metadata, "Is that enough?");
    await h.slack.waitFor((s) => s.callsTo("chat.postEphemeral").length === 1);
    expect(h.slack.callsTo("chat.postEphemeral")[0]?.args).toMatchObject({
      user: USER,
      text: NOT_RECORDED_NOTE,
    });
    expect(contents()).toEqual([]);
  });

  it("works on a message that has no thread yet: the answer starts its thread", async () => {
    const ts = nextTs();
    h.slack.seedMessage({ channel: CHANNEL, ts, user: "U0BOB", text: "Budget is 10k" });
    const opened = await openModal({ ts, text: "Budget is 10k", user: "U0BOB" });
    const metadata = (opened.view as { private_metadata: string }).private_metadata;
    await submit(metadata, "Is that enough?\nFor the whole year?");
    await h.settled(CHANNEL, ts, 2);
    expect(h.slack.replies(CHANNEL, ts)[0]?.text).toBe(
      `<@${USER}> asked:\n>Is that enough?\n>For the whole year?`,
    );
    expect(contents()[0]).toBe(
      [
        "Earlier messages in this Slack thread, oldest first:",
        "",
        "Bob: Budget is 10k",
        "",
        "---",
        "",
        "Question from Alice:",
        "Is that enough?\nFor the whole year?",
      ].join("\n"),
    );
  });

  it("keeps the modal open with a reason for an empty question or a channel it cannot post in", async () => {
    const { parent, reply, text } = seedThread();
    const opened = await openModal({ ts: reply, text, user: "U0CAROL", thread_ts: parent });
    const metadata = (opened.view as { private_metadata: string }).private_metadata;

    const blank = await submit(metadata, "   ");
    expect(blank.json).toEqual({
      response_action: "errors",
      errors: { question: "Please write a question." },
    });

    h.slack.failNext("chat.postMessage", { status: 200, error: "not_in_channel" });
    const refused = await submit(metadata, "why?");
    expect(refused.json).toMatchObject({ response_action: "errors" });
    expect(JSON.stringify(refused.json)).toMatch(/Invite me to the channel/);

    await h.bot.bridge.idle();
    expect(h.sim.control.requests).toEqual([]);
    expect(h.slack.replies(CHANNEL, parent)).toEqual([]);
  });
});
