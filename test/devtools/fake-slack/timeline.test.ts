import { LogLevel, WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../../src/devtools/fake-slack/server.js";

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
});
