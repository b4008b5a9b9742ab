import { LogLevel, WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

let fake: FakeSlack;
let web: WebClient;
let now = 1_700_000_000_000;

beforeAll(async () => {
  fake = await startFakeSlack({ now: () => now });
  web = new WebClient("xoxb-timeline-test", {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
  });
});
afterAll(() => fake.close());

describe("the fake's timeline of message changes", () => {
  it("stamps every post, edit and delete with the time it happened and what it showed", async () => {
    fake.seedMessage({ channel: "C1", ts: "1700000000.000100", user: "U1", text: "question" });
    now += 1_000;
    const { ts } = await web.chat.postMessage({
      channel: "C1",
      thread_ts: "1700000000.000100",
      text: "Starting…",
    });
    now += 250;
    await web.chat.update({
      channel: "C1",
      ts: ts as string,
      text: "## Plan",
      blocks: [{ type: "markdown", text: "## Plan" }],
    });
    now += 250;
    // A refused edit changed nothing, so nothing is stamped.
    const refused = web.apiCall("chat.update", { channel: "C1", ts, blocks: "oops" });
    await expect(refused).rejects.toThrow(/invalid_blocks_format/);
    await web.chat.delete({ channel: "C1", ts: ts as string });

    expect(fake.timeline).toEqual([
      {
        at: 1_700_000_000_000,
        kind: "post",
        channel: "C1",
        ts: "1700000000.000100",
        user: "U1",
        content: { text: "question" },
      },
      {
        at: 1_700_000_001_000,
        kind: "post",
        channel: "C1",
        ts,
        thread_ts: "1700000000.000100",
        user: "UBOT",
        bot_id: "BBOT",
        content: { text: "Starting…" },
      },
      {
        at: 1_700_000_001_250,
        kind: "edit",
        channel: "C1",
        ts,
        thread_ts: "1700000000.000100",
        user: "UBOT",
        bot_id: "BBOT",
        content: { text: "## Plan", blocks: [{ type: "markdown", text: "## Plan" }] },
      },
      {
        at: 1_700_000_001_500,
        kind: "delete",
        channel: "C1",
        ts,
        thread_ts: "1700000000.000100",
        user: "UBOT",
        bot_id: "BBOT",
        content: { text: "## Plan", blocks: [{ type: "markdown", text: "## Plan" }] },
      },
    ]);
    fake.reset();
    expect(fake.timeline).toEqual([]);
  });

  it("stamps a stream's start, each append and its stop, though none is an edit", async () => {
    fake.seedMessage({ channel: "C2", ts: "1700000100.000100", user: "U1", text: "question" });
    const stream = { channel: "C2", recipient_user_id: "U1", recipient_team_id: "T0001" };
    const started = await web.apiCall("chat.startStream", {
      ...stream,
      thread_ts: "1700000100.000100",
      markdown_text: "Hel",
    });
    const ts = String((started as { ts?: unknown }).ts);
    now += 400;
    await web.apiCall("chat.appendStream", { channel: "C2", ts, markdown_text: "lo" });
    now += 400;
    await web.apiCall("chat.stopStream", { channel: "C2", ts, markdown_text: "!" });

    const changes = fake.timeline
      .filter((change) => change.ts === ts)
      .map(({ at, kind, content }) => ({ at: at - now, kind, text: content.text }));
    expect(changes).toEqual([
      { at: -800, kind: "post", text: "" },
      { at: -800, kind: "stream", text: "Hel" },
      { at: -400, kind: "stream", text: "Hello" },
      { at: 0, kind: "stream", text: "Hello!" },
    ]);
    expect(fake.messages("C2").find((m) => m.ts === ts)?.edits).toBe(0);
    fake.reset();
  });
});
