import { afterEach, describe, expect, it } from "vitest";
import type { Block } from "../../tools/fake-slack/blocks.js";
import type { FakeSlack, RecordedCall } from "../../tools/fake-slack/server.js";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";

let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

const PLANS = [
  "| Plan | Price | Seats |",
  "| :--- | ----: | :---: |",
  "| `Basic` | 10 | **1** |",
  "| Team \\| Pro | 50 | 10 |",
].join("\n");

/** 22 columns: over the 20 cells a table block's row may hold, so it stays Markdown text. */
const METRICS = [
  `| ${Array.from({ length: 22 }, (_, i) => `m${i}`).join(" | ")} |`,
  `|${" --- |".repeat(22)}`,
  `| ${Array.from({ length: 22 }, (_, i) => `v${i}`).join(" | ")} |`,
].join("\n");

const ANSWER = [
  "Here is the comparison.",
  "",
  PLANS,
  "",
  "And every metric, in one wide table:",
  "",
  METRICS,
  "",
  "That is all.",
].join("\n");

/**
 * The words of a text, a table's pipes and delimiter rows aside, `\|` read as a pipe's cell,
 * and the inline Markdown a cell shows as style (code, bold) as its text.
 */
function words(text: string): string[] {
  return text
    .replace(/\\\|/g, " ")
    .replace(/[`*]/g, "")
    .split(/[\s|]+/)
    .filter((word) => word !== "" && !/^:?-+:?$/.test(word));
}

/** What the thread's replies show of the answer: their markdown and table blocks, in order. */
function shownAnswer(slack: FakeSlack, threadTs: string): string {
  return slack
    .replies(CHANNEL, threadTs)
    .map((m) =>
      slack.visibleText({
        text: "",
        blocks: (m.blocks ?? []).filter((b) => b.type === "markdown" || b.type === "table"),
      }),
    )
    .join("\n");
}

const tablesIn = (blocks: unknown): Block[] =>
  ((blocks ?? []) as Block[]).filter((b) => b.type === "table");

/** The Slack calls that carried a table block, by method. */
function tableCalls(slack: FakeSlack): RecordedCall[] {
  return slack.calls.filter(
    (c) =>
      tablesIn(c.args.blocks).length > 0 || JSON.stringify(c.args.chunks ?? []).includes('"table"'),
  );
}

/** The checks both modes share: the final layout, its calls, and the exact final text. */
function expectFinalLayout(slack: FakeSlack, threadTs: string): void {
  const replies = slack.replies(CHANNEL, threadTs);
  // The first table ends the first message (one table a message, at its bottom); the wide one
  // stays text in the second, with the rest of the answer.
  expect(replies).toHaveLength(2);
  expect((replies[0]?.blocks ?? []).map((b) => b.type)).toEqual(["markdown", "table"]);
  const [table] = tablesIn(replies[0]?.blocks);
  expect(slack.visibleText({ text: "", blocks: [table as Block] })).toBe(
    "Plan | Price | Seats\nBasic | 10 | 1\nTeam | Pro | 50 | 10",
  );
  // Inline Markdown in a cell shows as rich text styles.
  expect(JSON.stringify(table?.rows)).toContain(
    '{"type":"text","text":"Basic","style":{"code":true}}',
  );
  expect(table?.column_settings).toEqual([
    { align: "left" },
    { align: "right" },
    { align: "center" },
  ]);
  expect(tablesIn(replies[1]?.blocks)).toEqual([]);
  const second = replies[1]?.blocks?.find((b) => b.type === "markdown") as unknown as {
    text: string;
  };
  expect(second.text).toContain(METRICS);
  expect(second.text.endsWith("That is all.")).toBe(true);
  // Every word of the run's output, in order, nothing lost or repeated.
  expect(words(shownAnswer(slack, threadTs))).toEqual(words(ANSWER));
  // Only the final layout carries a table: one edit of the first message.
  const calls = tableCalls(slack);
  expect(calls.map((c) => [c.method, c.args.ts])).toEqual([["chat.update", replies[0]?.ts]]);
  expect(slack.calls.filter((c) => !c.ok)).toEqual([]);
}

describe("Markdown tables in Slack", () => {
  it("edited: a table that fits becomes a table block ending its message, a too-wide one stays text", async () => {
    h = await startHarness({
      env: { SLACK_STREAMING: "off" },
      simulator: { answer: { tokensPerSecond: 200 } },
    });
    h.sim.control.enqueueAnswer({ text: ANSWER, modelUsed: "max" });
    const { threadTs } = await h.mention("<@UBOT> compare the plans");
    await h.settled(CHANNEL, threadTs, 2);
    expectFinalLayout(h.slack, threadTs);
    // The placeholder, then the message the text after the table goes on in.
    expect(h.slack.callsTo("chat.postMessage")).toHaveLength(2);
    expect(h.slack.calls.filter((c) => c.method.endsWith("Stream"))).toEqual([]);
  });

  it("streamed: the stream shows the tables as text, the final edits lay them out", async () => {
    h = await startHarness({
      env: { SLACK_STREAMING: "auto" },
      // Written over about three seconds: a stream appends about once a second, so the tables
      // go out as text while it is written, whenever its start went (at 200 tokens a second
      // the answer was written within the first append's wait, and the stream showed the
      // tables only when its start happened to go late).
      simulator: { answer: { tokensPerSecond: 40 } },
    });
    h.sim.control.enqueueAnswer({ text: ANSWER, modelUsed: "max" });
    const { threadTs } = await h.mention("<@UBOT> compare the plans");
    await h.settled(CHANNEL, threadTs, 2);
    expectFinalLayout(h.slack, threadTs);
    const [message] = h.slack.replies(CHANNEL, threadTs);
    const starts = h.slack.callsTo("chat.startStream");
    expect(starts).toHaveLength(1);
    const streamed = [starts[0], ...h.slack.callsTo("chat.appendStream")]
      .map((c) =>
        ((c?.args.chunks ?? []) as { type: string; text?: string }[])
          .map((chunk) => (chunk.type === "markdown_text" ? (chunk.text ?? "") : ""))
          .join(""),
      )
      .join("");
    // The table's pipes went out as Markdown while the answer was written.
    expect(ANSWER.startsWith(streamed)).toBe(true);
    expect(streamed).toContain("| :--- |");
    // The stream was stopped without the answer's end: the final edits show it, tables laid out.
    const [stop, ...moreStops] = h.slack.callsTo("chat.stopStream");
    expect(moreStops).toEqual([]);
    expect(stop?.args.ts).toBe(message?.ts);
    expect(stop?.args.blocks).toBeUndefined();
    expect(h.slack.callsTo("chat.postMessage")).toHaveLength(1);
  });
});
