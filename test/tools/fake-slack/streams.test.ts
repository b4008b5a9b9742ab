import type { types } from "@slack/bolt";
import { LogLevel, WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../tools/fake-slack/limits.js";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

let fake: FakeSlack;
let web: WebClient;
/** The fake's clock: tests move it to make a stream idle. */
let now = Date.UTC(2026, 0, 1);

const CHANNEL = "C1";
const THREAD = "1700000000.000100";
const RECIPIENT = { recipient_user_id: "U1", recipient_team_id: "T0001" };

beforeAll(async () => {
  fake = await startFakeSlack({ now: () => now });
  web = new WebClient("xoxb-test", {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
  });
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

/** The Slack error a call is refused with, or undefined when it succeeded. */
function failure(call: Promise<unknown>): Promise<string | undefined> {
  return call.then(
    () => undefined,
    (e: { data?: { error?: string }; code?: string }) => e.data?.error ?? e.code,
  );
}

/** A raw call, for arguments the WebClient's types would not let through. */
async function raw(method: string, args: Record<string, unknown>): Promise<{ error?: string }> {
  const response = await fetch(`${fake.apiUrl}${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer xoxb-test" },
    body: JSON.stringify(args),
  });
  return (await response.json()) as { error?: string };
}

const text = (t: string) => ({ type: "markdown_text" as const, text: t });

async function start(chunks: types.AnyChunk[] = [text("Hello")]): Promise<string> {
  const started = await web.chat.startStream({
    channel: CHANNEL,
    thread_ts: THREAD,
    ...RECIPIENT,
    chunks,
  });
  return started.ts as string;
}

describe("the fake's native streams", () => {
  it("streams Markdown into one message that the transcript shows, and keeps the stop's mark", async () => {
    const ts = await start();
    await web.chat.appendStream({ channel: CHANNEL, ts, chunks: [text(" world")] });
    expect(fake.streamState(CHANNEL, ts)?.state).toBe("streaming");
    expect(fake.threadTranscript(CHANNEL, THREAD)).toEqual(["Hello world"]);
    const mark = { event_type: "assistant_bridge_reply", event_payload: { turn: "t1", part: 0 } };
    await web.chat.stopStream({
      channel: CHANNEL,
      ts,
      metadata: mark,
      blocks: [{ type: "context", elements: [{ type: "mrkdwn", text: "Answered" }] }],
    });
    expect(fake.streamState(CHANNEL, ts)?.state).toBe("stopped");
    expect(fake.threadTranscript(CHANNEL, THREAD)).toEqual(["Hello world\nAnswered"]);
    const read = await web.conversations.replies({
      channel: CHANNEL,
      ts: THREAD,
      include_all_metadata: true,
    });
    expect(read.messages?.find((m) => m.ts === ts)?.metadata).toEqual(mark);
    expect(fake.replies(CHANNEL, THREAD)).toHaveLength(1);
  });

  it("wants the recipient in a channel, not in a DM", async () => {
    const bare = { thread_ts: THREAD, chunks: [text("hi")] };
    expect(await failure(web.chat.startStream({ channel: CHANNEL, ...bare }))).toBe(
      "missing_recipient_user_id",
    );
    expect(
      await failure(web.chat.startStream({ channel: CHANNEL, ...bare, recipient_user_id: "U1" })),
    ).toBe("missing_recipient_team_id");
    expect(await failure(web.chat.startStream({ channel: "D1", ...bare }))).toBeUndefined();
  });

  it("refuses a stop whose blocks hold two tables, and shows a table's cells once it takes one", async () => {
    const ts = await start();
    const table = { type: "table", rows: [[{ type: "raw_text", text: "cell" }]] };
    const stop = (blocks: unknown[]) => raw("chat.stopStream", { channel: CHANNEL, ts, blocks });
    expect((await stop([table, table])).error).toBe("invalid_blocks");
    expect(fake.streamState(CHANNEL, ts)?.state).toBe("streaming");
    expect((await stop([table])).error).toBeUndefined();
    expect(fake.threadTranscript(CHANNEL, THREAD)[0]).toContain("cell");
  });

  it("refuses appends once the stream stopped, and edits while it streams", async () => {
    const ts = await start();
    const edit = () => web.chat.update({ channel: CHANNEL, ts, text: "replaced", blocks: [] });
    expect(await failure(edit())).toBe("cant_update_message");
    await web.chat.stopStream({ channel: CHANNEL, ts });
    expect(
      await failure(web.chat.appendStream({ channel: CHANNEL, ts, chunks: [text("more")] })),
    ).toBe("message_not_in_streaming_state");
    expect(await failure(web.chat.stopStream({ channel: CHANNEL, ts }))).toBe(
      "message_not_in_streaming_state",
    );
    expect(await failure(edit())).toBeUndefined();
    expect(fake.threadTranscript(CHANNEL, THREAD)).toEqual(["replaced"]);
  });

  it("holds at most 12,000 characters of Markdown per message, all appends together", async () => {
    const ts = await start([text("a".repeat(11_000))]);
    const append = (t: string) =>
      web.chat.appendStream({ channel: CHANNEL, ts, chunks: [text(t)] });
    expect(await failure(append("b".repeat(1_001)))).toBe("msg_too_long");
    expect(await failure(append("b".repeat(1_000)))).toBeUndefined();
    expect(await failure(append("c"))).toBe("msg_too_long");
    expect(fake.streamState(CHANNEL, ts)?.state).toBe("streaming");
    expect(await failure(start([text("d".repeat(12_001))]))).toBe("msg_too_long");
  });

  it("checks the chunks' shapes and the markdown_text conflicts", async () => {
    const started = (chunks: unknown[], extra: Record<string, unknown> = {}) =>
      raw("chat.startStream", {
        channel: CHANNEL,
        thread_ts: THREAD,
        ...RECIPIENT,
        chunks,
        ...extra,
      });
    const task = { type: "task_update", id: "s1", title: "Search", status: "in_progress" };
    expect((await started([task, { type: "plan_update", title: "Plan" }])).error).toBeUndefined();
    expect((await started([{ ...task, status: "done" }])).error).toBe("invalid_chunks");
    expect((await started([{ ...task, id: "" }])).error).toBe("invalid_chunks");
    expect((await started([{ type: "sparkles" }])).error).toBe("invalid_chunks");
    expect((await started([{ type: "blocks", blocks: "no" }])).error).toBe("invalid_chunks");
    const table = (rows: number) => ({
      type: "table",
      rows: Array.from({ length: rows }, () => [{ type: "raw_text", text: "x" }]),
    });
    expect((await started([{ type: "blocks", blocks: [table(100)] }])).error).toBeUndefined();
    expect((await started([{ type: "blocks", blocks: [table(101)] }])).error).toBe(
      "invalid_chunks",
    );
    expect((await started([])).error).toBe("no_text");
    expect((await started([], { markdown_text: "hi", blocks: [{ type: "divider" }] })).error).toBe(
      "markdown_text_conflict",
    );
    expect((await started([], { markdown_text: "hi", text: "hi" })).error).toBe(
      "markdown_text_conflict",
    );
  });

  it("shows task cards where they first appeared, their details adding up", async () => {
    const ts = await start([
      { type: "task_update", id: "s1", title: "Searching", status: "in_progress", details: "a" },
      text("Found it."),
    ]);
    await web.chat.appendStream({
      channel: CHANNEL,
      ts,
      chunks: [
        { type: "task_update", id: "s1", title: "Searched", status: "complete", details: "b" },
      ],
    });
    expect(fake.streamState(CHANNEL, ts)?.items).toEqual([
      { kind: "task", id: "s1", title: "Searched", status: "complete", details: "ab" },
      { kind: "markdown", text: "Found it." },
    ]);
    expect(fake.threadTranscript(CHANNEL, THREAD)).toEqual(["Searched\nFound it."]);
  });

  it("expires a stream five minutes after its last append", async () => {
    const ts = await start();
    now += 4 * 60_000;
    await web.chat.appendStream({ channel: CHANNEL, ts, chunks: [text(".")] });
    now += 4 * 60_000;
    expect(fake.streamState(CHANNEL, ts)?.state).toBe("streaming");
    now += 60_000;
    expect(
      await failure(web.chat.appendStream({ channel: CHANNEL, ts, chunks: [text(".")] })),
    ).toBe("message_not_in_streaming_state");
    expect(fake.streamState(CHANNEL, ts)?.state).toBe("expired");
  });

  it("answers stopped_by_user once the person stopped it, and channel_type_not_supported where streams are refused", async () => {
    const ts = await start();
    expect(fake.stopStreamAsUser(CHANNEL, ts)).toBe(true);
    expect(
      await failure(web.chat.appendStream({ channel: CHANNEL, ts, chunks: [text(".")] })),
    ).toBe("stopped_by_user");
    expect(await failure(web.chat.stopStream({ channel: CHANNEL, ts }))).toBe("stopped_by_user");
    fake.refuseStreamsIn("C2");
    const refused = web.chat.startStream({
      channel: "C2",
      thread_ts: THREAD,
      ...RECIPIENT,
      chunks: [text("x")],
    });
    expect(await failure(refused)).toBe("channel_type_not_supported");
  });

  it("counts the stream methods against Slack's tiers", () => {
    expect(DEFAULT_LIMITS["chat.startStream"]).toBe(20);
    expect(DEFAULT_LIMITS["chat.stopStream"]).toBe(20);
    expect(DEFAULT_LIMITS["chat.appendStream"]).toBe(100);
  });
});
