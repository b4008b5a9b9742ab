import { afterEach, describe, expect, it } from "vitest";
import { nextTs } from "../../tools/slack-requests.js";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function harness(env: Record<string, string> = {}): Promise<Harness> {
  h = await startHarness({ env });
  h.slack.seedUser({
    id: "U0ALICE",
    name: "alice",
    real_name: "Alice Liddell",
    display_name: "Alice",
  });
  h.slack.seedUser({ id: "U0BOB", name: "bob", real_name: "Bob Builder" });
  h.slack.seedUser({ id: "U0CAROL", name: "carol", display_name: "Carol" });
  return h;
}

const contents = (x: Harness) =>
  x
    .serviceRequests("POST", /^\/v1\/thread\/[^/]+\/messages$/)
    .map((r) => (r.body as { content: string }).content);

/** People's messages in a thread, seeded in Slack before the bot is asked anything. */
function seedThread(x: Harness, messages: { user: string; text: string; files?: unknown[] }[]) {
  const parent = nextTs();
  const [first, ...rest] = messages;
  x.slack.seedMessage({ channel: CHANNEL, ts: parent, ...(first ?? { user: "U0BOB", text: "" }) });
  for (const m of rest)
    x.slack.seedMessage({ channel: CHANNEL, ts: nextTs(), thread_ts: parent, ...m });
  return parent;
}

describe("a mention in a thread that already has people's messages", () => {
  it("passes the earlier messages on first, then only what people wrote in between", async () => {
    const x = await harness();
    x.sim.control.enqueueAnswer({ text: "Here is the summary." });
    x.sim.control.enqueueAnswer({ text: "Next, merge PR 7." });
    x.sim.control.enqueueAnswer({ text: "You're welcome." });
    const parent = seedThread(x, [
      {
        user: "U0BOB",
        text: "Deploy of <https://ci.example.com/run/42|run 42> failed &amp; rolled back",
      },
      { user: "U0CAROL", text: "<@U0BOB> was it the migration?\nI saw errors in the log" },
      { user: "U0BOB", text: "here is the log", files: [{ id: "F1", name: "error.log" }] },
    ]);

    await x.mention("<@UBOT> summarize this thread", { thread_ts: parent });
    const [first] = await x.settled(CHANNEL, parent);
    expect(first).toContain("Here is the summary.");
    expect(contents(x)).toEqual([
      [
        "Earlier messages in this Slack thread, oldest first:",
        "",
        "Bob Builder: Deploy of run 42 (https://ci.example.com/run/42) failed & rolled back",
        "Carol: @Bob Builder was it the migration?",
        "  I saw errors in the log",
        "Bob Builder: here is the log [file: error.log]",
        "",
        "---",
        "",
        "Question from Alice:",
        "summarize this thread",
      ].join("\n"),
    ]);

    // Carol's reply is also sent to the channel: the bot does not answer it (a subtype), but
    // it is part of the discussion and goes on with the next question.
    await x.message({
      text: "the fix is in <https://git.example.com/pr/7|PR 7>",
      thread_ts: parent,
      user: "U0CAROL",
      subtype: "thread_broadcast",
    });
    await x.message({ text: "and what should we do next?", thread_ts: parent });
    await x.settled(CHANNEL, parent, 2);
    expect(contents(x)[1]).toBe(
      [
        "Messages written in this Slack thread since the last question, oldest first:",
        "",
        "Carol: the fix is in PR 7 (https://git.example.com/pr/7)",
        "",
        "---",
        "",
        "Question from Alice:",
        "and what should we do next?",
      ].join("\n"),
    );

    // Nothing new in between (only the bot's own answer): the question alone.
    await x.message({ text: "thanks", thread_ts: parent });
    const transcript = await x.settled(CHANNEL, parent, 3);
    expect(transcript[2]).toContain("You're welcome.");
    expect(contents(x)[2]).toBe("thanks");
    const reads = x.slack.callsTo("conversations.replies");
    expect(reads.map((c) => c.args.ts)).toEqual([parent, parent, parent]);
    expect(reads[0]?.args.oldest).toBeUndefined();
    expect(reads[1]?.args.oldest).toBeDefined();
    expect(x.slack.rateLimited).toBe(0);
  });

  it("reads a long thread page by page", async () => {
    const x = await harness();
    const people = ["U0BOB", "U0CAROL"];
    const parent = seedThread(
      x,
      Array.from({ length: 450 }, (_, i) => ({ user: people[i % 2] as string, text: `m${i}` })),
    );
    await x.mention("<@UBOT> what did we decide?", { thread_ts: parent });
    await x.settled(CHANNEL, parent);
    const reads = x.slack.callsTo("conversations.replies");
    expect(reads).toHaveLength(3);
    expect(reads.map((c) => Number(c.args.limit))).toEqual([200, 200, 200]);
    expect(reads[0]?.args.cursor).toBeUndefined();
    expect(reads[1]?.args.cursor).toBeTruthy();
    expect(reads[2]?.args.cursor).toBeTruthy();
    const [content] = contents(x);
    const lines = (content ?? "").split("\n").filter((l) => /^(Bob Builder|Carol): m\d+$/.test(l));
    expect(lines).toEqual(
      Array.from({ length: 450 }, (_, i) => `${i % 2 === 0 ? "Bob Builder" : "Carol"}: m${i}`),
    );
    // Names were looked up once per person, not once per message.
    const looked = x.slack.callsTo("users.info").map((c) => c.args.user);
    expect(looked).toEqual(expect.arrayContaining(["U0ALICE", "U0BOB", "U0CAROL"]));
    expect(new Set(looked).size).toBe(looked.length);
  });

  it("trims a very long thread to THREAD_CONTEXT_CHARS, keeping the first and latest messages", async () => {
    const x = await harness({ THREAD_CONTEXT_CHARS: "1000" });
    x.sim.control.enqueueAnswer({ text: "Trimmed summary." });
    const parent = seedThread(
      x,
      Array.from({ length: 100 }, (_, i) => ({
        user: "U0BOB",
        text: `message ${i}: ${"words ".repeat(8).trim()}`,
      })),
    );
    await x.mention("<@UBOT> summarize", { thread_ts: parent });
    const [reply] = await x.settled(CHANNEL, parent);
    const [content = ""] = contents(x);
    const context = content.slice(
      content.indexOf("\n\n") + 2,
      content.indexOf("\n\n---\n\nQuestion from Alice:\nsummarize"),
    );
    expect(context.length).toBeLessThanOrEqual(1000);
    const lines = context.split("\n");
    expect(lines[0]).toBe(`Bob Builder: message 0: ${"words ".repeat(8).trim()}`);
    const leftOut = Number(/^\[… (\d+) messages left out …\]$/.exec(lines[1] ?? "")?.[1]);
    expect(leftOut).toBeGreaterThan(50);
    expect(lines.at(-1)).toBe(`Bob Builder: message 99: ${"words ".repeat(8).trim()}`);
    expect(lines.length - 2 + leftOut + 1).toBe(100);
    expect(reply).toContain("Trimmed summary.");
    expect(reply).toContain(`${leftOut} of its earlier messages were left out`);
  });

  it("answers the question alone, saying so, when the history cannot be read", async () => {
    const x = await harness();
    x.sim.control.enqueueAnswer({ text: "Answer without context." });
    x.sim.control.enqueueAnswer({ text: "Answer with context." });
    const parent = seedThread(x, [
      { user: "U0BOB", text: "first point" },
      { user: "U0CAROL", text: "second point" },
    ]);
    x.slack.failNext("conversations.replies", { status: 200, error: "missing_scope" });
    await x.mention("<@UBOT> thoughts?", { thread_ts: parent });
    const [reply] = await x.settled(CHANNEL, parent);
    expect(reply).toContain("Answer without context.");
    expect(reply).toMatch(/couldn.t read this thread.s earlier messages/);
    expect(contents(x)).toEqual(["thoughts?"]);

    // The next question carries what the assistant has not seen, without the first question.
    await x.message({ text: "and now?", thread_ts: parent });
    const transcript = await x.settled(CHANNEL, parent, 2);
    expect(transcript[1]).toContain("Answer with context.");
    expect(transcript[1]).not.toMatch(/couldn.t read/);
    expect(contents(x)[1]).toBe(
      [
        "Earlier messages in this Slack thread, oldest first:",
        "",
        "Bob Builder: first point",
        "Carol: second point",
        "",
        "---",
        "",
        "Question from Alice:",
        "and now?",
      ].join("\n"),
    );
  });

  it("reads nothing for a question that starts a thread, nor in DMs", async () => {
    const x = await harness();
    const top = await x.mention("<@UBOT> fresh question");
    await x.settled(CHANNEL, top.threadTs);
    const dm = await x.message({ text: "hello", channel: "D0DM", channel_type: "im" });
    await x.settled("D0DM", dm.threadTs);
    await x.message({ text: "more", channel: "D0DM", channel_type: "im", thread_ts: dm.threadTs });
    await x.settled("D0DM", dm.threadTs, 2);
    expect(contents(x)).toEqual(["fresh question", "hello", "more"]);
    expect(x.slack.callsTo("conversations.replies")).toEqual([]);
  });
});
