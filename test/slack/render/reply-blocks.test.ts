import { describe, expect, it } from "vitest";
import type { ReplyStep } from "../../../src/bridge/ports.js";
import { splitAnswer } from "../../../src/slack/render/answer-split.js";
import { feedbackBlock } from "../../../src/slack/render/feedback-block.js";
import {
  buildReply,
  type ReplyPayload,
  type ReplyPhase,
  STOP_ACTION_ID,
  visibleBody,
} from "../../../src/slack/render/reply-blocks.js";

type Block = { type: string; text?: unknown; elements?: Array<Record<string, unknown>> };
const blocksOf = (p: ReplyPayload) => p.blocks as Block[];
const kinds = (p: ReplyPayload) => blocksOf(p).map((b) => b.type);
/** The mrkdwn text of the payload's context and section blocks, in order. */
const statusTexts = (p: ReplyPayload) =>
  blocksOf(p).flatMap((b) =>
    b.type === "section"
      ? [(b.text as { text: string }).text]
      : b.type === "context"
        ? (b.elements ?? []).map((e) => e.text as string)
        : [],
  );

/** mrkdwn must carry `&`, `<`, `>` escaped; only our own `<@U…>` mentions stay as markup. */
function expectEscaped(mrkdwn: string): void {
  const rest = mrkdwn.replace(/<@[UW][A-Z0-9]+>/g, "");
  expect(rest).not.toMatch(/[<>]/);
  expect(rest).not.toMatch(/&(?!amp;|lt;|gt;)/);
}

function expectWithinLimits(payload: ReplyPayload): void {
  expect(JSON.parse(JSON.stringify(payload))).toEqual(payload);
  expect(payload.blocks.length).toBeLessThanOrEqual(50);
  expect(payload.text.length).toBeGreaterThan(0);
  expect(payload.text.length).toBeLessThanOrEqual(40_000);
  expectEscaped(payload.text);
  let markdown = 0;
  for (const block of blocksOf(payload)) {
    if (block.type === "markdown") {
      const text = block.text as string;
      expect(text.trim()).not.toBe("");
      markdown += text.length;
    } else if (block.type === "section") {
      const text = (block.text as { type: string; text: string }).text;
      expect(text.length).toBeLessThanOrEqual(3_000);
      expectEscaped(text);
    } else if (block.type === "context") {
      expect(block.elements?.length).toBeLessThanOrEqual(10);
      for (const element of block.elements ?? []) {
        expect((element.text as string).length).toBeLessThanOrEqual(3_000);
        expectEscaped(element.text as string);
      }
    } else if (block.type === "context_actions") {
      expect(block.elements?.length).toBeLessThanOrEqual(5);
      for (const element of block.elements ?? []) {
        for (const button of [element.positive_button, element.negative_button]) {
          const { text, value, accessibility_label } = button as {
            text: { text: string };
            value: string;
            accessibility_label?: string;
          };
          expect(text.text.length).toBeLessThanOrEqual(75);
          expect(value.length).toBeLessThanOrEqual(2_000);
          expect(accessibility_label?.length ?? 0).toBeLessThanOrEqual(75);
        }
      }
    } else {
      expect(block.type).toBe("actions");
      for (const element of block.elements ?? []) {
        expect(((element.text as { text: string }).text as string).length).toBeLessThanOrEqual(75);
        expect((element.value as string).length).toBeLessThanOrEqual(2_000);
      }
    }
  }
  expect(markdown).toBeLessThanOrEqual(12_000);
}

const SIMULATOR_ANSWER = [
  "## Summary",
  "",
  "Here is **bold**, _italic_ and `inline code` with a [link](https://example.com/?a=1&b=2).",
  "",
  "- first item",
  "- second item",
  "",
  "1. one",
  "2. two",
  "",
  "```python",
  "if a < b and b > c:",
  '    print("a & b")',
  "```",
].join("\n");

describe("buildReply", () => {
  it("shows an in-progress reply with its status and one Stop button", () => {
    const phase = { kind: "queued", ahead: 3, where: "service" } as const;
    const payload = buildReply({ body: "", phase, turnId: "turn-7" });
    expect(kinds(payload)).toEqual(["context", "actions"]);
    expect(statusTexts(payload)).toEqual([
      ":hourglass_flowing_sand: Queued — 3 ahead at the assistant service",
    ]);
    expect(payload.text).toBe("Queued — 3 ahead at the assistant service");
    expect(blocksOf(payload)[1]?.elements).toEqual([
      {
        type: "button",
        action_id: STOP_ACTION_ID,
        text: { type: "plain_text", text: "Stop" },
        style: "danger",
        value: "turn-7",
      },
    ]);
    expect(STOP_ACTION_ID).toBe("stop_run");
    expect(JSON.stringify(payload)).not.toContain("confirm");
  });

  it("passes the answer's Markdown through the markdown block unchanged", () => {
    const payload = buildReply({ body: SIMULATOR_ANSWER, phase: { kind: "working" }, turnId: "t" });
    expect(kinds(payload)).toEqual(["markdown", "context", "actions"]);
    expect(visibleBody(payload)).toBe(SIMULATOR_ANSWER);
    expect(statusTexts(payload)).toEqual([":writing_hand: Writing…"]);
    expect(payload.text).toBe(
      SIMULATOR_ANSWER.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;"),
    );
    expect(splitAnswer(SIMULATOR_ANSWER)).toEqual([SIMULATOR_ANSWER]);
  });

  it("words each in-progress phase", () => {
    const status = (phase: ReplyPhase, body = "") =>
      statusTexts(buildReply({ body, phase, turnId: "t" }));
    expect(status({ kind: "queued", ahead: 0, where: "service" })).toEqual([
      ":hourglass_flowing_sand: Queued — next in line",
    ]);
    expect(status({ kind: "queued", ahead: 2, where: "thread" })).toEqual([
      ":hourglass_flowing_sand: Queued — 2 ahead in this thread",
    ]);
    expect(status({ kind: "starting" })).toEqual([":hourglass_flowing_sand: Starting…"]);
    expect(status({ kind: "working" })).toEqual([":hourglass_flowing_sand: Working…"]);
    expect(status({ kind: "retrying", note: "" })).toEqual([
      ":warning: The assistant service is not answering; still trying…",
    ]);
    expect(
      status({ kind: "retrying", note: "No answer (HTTP 503 <html>); trying again" }, "so far"),
    ).toEqual([":warning: No answer (HTTP 503 &lt;html&gt;); trying again"]);
  });

  it("names the step in progress instead of Working… while the run works, and none once it ended", () => {
    const searching: ReplyStep = { id: "s1", title: "Searching the docs", status: "in_progress" };
    const steps: ReplyStep[] = [
      searching,
      { id: "s2", title: "Reading <!channel> & co", status: "in_progress" },
      { id: "s3", title: "Planning", status: "pending" },
      { id: "s4", title: "Fetched.", status: "complete" },
    ];
    const working = { kind: "working" } as const;
    const build = (phase: ReplyPhase, body: string, shown: ReplyStep[]) =>
      buildReply({ body, phase, turnId: "t", steps: shown });
    // The step begun last of those in progress, escaped, told as going on.
    const both = build(working, "", steps);
    expect(statusTexts(both)).toEqual([":gear: Reading &lt;!channel&gt; &amp; co…"]);
    expect(both.text).toBe("Reading &lt;!channel&gt; &amp; co…");
    expect(kinds(both)).toEqual(["context", "actions"]);
    expect(statusTexts(build(working, "So far", [searching]))).toEqual([
      ":gear: Searching the docs…",
    ]);
    expect(statusTexts(build(working, "", [{ ...searching, title: "Thinking…" }]))).toEqual([
      ":gear: Thinking…",
    ]);
    // No step in progress: the usual words.
    expect(statusTexts(build(working, "So far", steps.slice(2)))).toEqual([
      ":writing_hand: Writing…",
    ]);
    expect(statusTexts(build(working, "", []))).toEqual([":hourglass_flowing_sand: Working…"]);
    // Only a working reply shows a step; an ended one shows the answer and its outcome.
    const done = build({ kind: "completed", modelUsed: "m" }, "Answer.", steps);
    expect(JSON.stringify(done)).not.toMatch(/gear|Searching|Reading/u);
    expect(statusTexts(done)).toEqual(["Answered by m"]);
    const stopped = build({ kind: "stopped", by: "U1" }, "Ans", steps);
    expect(JSON.stringify(stopped)).not.toMatch(/gear|Searching|Reading/u);
    expect(statusTexts(build({ kind: "starting" }, "", steps))).toEqual([
      ":hourglass_flowing_sand: Starting…",
    ]);
    const long = build(working, "", [{ ...searching, title: "x".repeat(5_000) }]);
    expect(statusTexts(long)[0]).toBe(`:gear: ${"x".repeat(199)}…`);
    expectWithinLimits(long);
  });

  it("ends a completed reply with the model, and without a Stop button", () => {
    const withModel = buildReply({
      body: "Done.",
      phase: { kind: "completed", modelUsed: "max" },
      turnId: "t",
    });
    expect(kinds(withModel)).toEqual(["markdown", "context", "context_actions"]);
    expect(statusTexts(withModel)).toEqual(["Answered by max"]);
    expect(withModel.text).toBe("Done.");

    const plain = buildReply({ body: "Done.", phase: { kind: "completed" }, turnId: "t" });
    expect(kinds(plain)).toEqual(["markdown", "context_actions"]);

    const empty = buildReply({ body: "", phase: { kind: "completed" }, turnId: "t" });
    expect(kinds(empty)).toEqual(["context", "context_actions"]);
    expect(empty.text).toBe("The assistant finished without writing an answer.");
  });

  it("ends a failed run with its escaped error, cut to fit", () => {
    const failed = buildReply({
      body: "Partial",
      phase: { kind: "failed", error: "tool <fetch> failed & gave up" },
      turnId: "t",
    });
    expect(kinds(failed)).toEqual(["markdown", "section"]);
    expect(statusTexts(failed)).toEqual([
      ":x: The run failed: tool &lt;fetch&gt; failed &amp; gave up",
    ]);
    expect(failed.text).toBe("Partial\n\nThe run failed: tool &lt;fetch&gt; failed &amp; gave up");

    const long = buildReply({
      body: "",
      phase: { kind: "failed", error: "<x>".repeat(5_000) },
      turnId: "t",
    });
    const [line] = statusTexts(long);
    expect(line?.length).toBeLessThanOrEqual(3_000);
    expect(line?.startsWith(":x: The run failed: &lt;x&gt;")).toBe(true);
    expect(line?.endsWith("…")).toBe(true);
    expectWithinLimits(long);
  });

  it("says who stopped a run, and what an unreachable service means", () => {
    const stopped = buildReply({
      body: "Half",
      phase: { kind: "stopped", by: "U123ABC" },
      turnId: "t",
    });
    expect(statusTexts(stopped)).toEqual([":black_square_for_stop: Stopped by <@U123ABC>."]);
    expect(stopped.text).toBe("Half\n\nStopped by <@U123ABC>.");
    const notAnId = buildReply({
      body: "",
      phase: { kind: "stopped", by: "<!channel>" },
      turnId: "t",
    });
    expect(statusTexts(notAnId)).toEqual([":black_square_for_stop: Stopped by &lt;!channel&gt;."]);
    expect(statusTexts(buildReply({ body: "", phase: { kind: "stopped" }, turnId: "t" }))).toEqual([
      ":black_square_for_stop: Stopped.",
    ]);

    const unreachable = buildReply({
      body: "",
      phase: {
        kind: "unreachable",
        message: "The assistant service could not be reached (timeout).",
      },
      turnId: "t",
    });
    expect(kinds(unreachable)).toEqual(["section"]);
    expect(statusTexts(unreachable)).toEqual([
      ":warning: The assistant service could not be reached (timeout).",
    ]);
  });

  it("shows a finished earlier part as its Markdown only", () => {
    const payload = buildReply({
      body: "Part one",
      phase: { kind: "continued" },
      turnId: "t",
      notes: ["ignored here"],
      part: { index: 1 },
    });
    expect(payload).toEqual({
      text: "Part one",
      blocks: [{ type: "markdown", text: "Part one" }],
      // Invisible: how the bot finds this message of this turn again.
      metadata: { event_type: "assistant_bridge_reply", event_payload: { turn: "t", part: 1 } },
    });
  });

  it("adds notes and the part number as small lines", () => {
    const payload = buildReply({
      body: "More",
      phase: { kind: "working" },
      turnId: "t",
      notes: ["Files aren't passed on to the assistant.", "  ", "A & B"],
      part: { index: 2, total: 3 },
    });
    expect(kinds(payload)).toEqual(["markdown", "context", "context", "actions"]);
    expect(statusTexts(payload)).toEqual([
      ":writing_hand: Writing… · part 3 of 3",
      "Files aren't passed on to the assistant.\nA &amp; B",
    ]);
  });

  it("words mentions in the text fallback as the block will show them, escaping the rest", () => {
    const payload = buildReply({
      body: "Hi <!channel> and <@U1|ada> (a < b)",
      phase: { kind: "completed" },
      turnId: "t",
    });
    expect(payload.text).toBe("Hi @channel and @ada (a &lt; b)");
  });

  it("omits a blank body instead of sending an empty markdown block", () => {
    const payload = buildReply({ body: " \n\n ", phase: { kind: "working" }, turnId: "t" });
    expect(kinds(payload)).toEqual(["context", "actions"]);
    expect(payload.text).toBe("Working…");
    expect(buildReply({ body: "\n", phase: { kind: "continued" }, turnId: "t" })).toMatchObject({
      text: "…",
      blocks: [],
    });
  });

  it("keeps every phase within Slack's limits, whatever the body, error and notes", () => {
    const huge = "x & <y> 😀 ".repeat(3_000); // 30,000 chars, 60,000+ once escaped
    const phases: ReplyPhase[] = [
      { kind: "queued", ahead: 12, where: "service" },
      { kind: "starting" },
      { kind: "working" },
      { kind: "retrying", note: "n<".repeat(4_000) },
      { kind: "completed", modelUsed: "m&".repeat(3_000) },
      { kind: "completed" },
      { kind: "failed", error: "e>".repeat(9_000) },
      { kind: "stopped", by: "W0123" },
      { kind: "unreachable", message: "u&".repeat(9_000) },
      { kind: "continued" },
    ];
    const bodies = ["", "short", huge, "&".repeat(39_999), "😀".repeat(7_000)];
    const noteSets = [[], Array.from({ length: 60 }, (_, i) => `note ${i} <&>`.repeat(20))];
    for (const phase of phases) {
      for (const body of bodies) {
        for (const notes of noteSets) {
          const payload = buildReply({ body, phase, turnId: "turn", notes, part: { index: 1 } });
          expectWithinLimits(payload);
          if (body.length > 12_000) expect(visibleBody(payload).endsWith("…")).toBe(true);
        }
      }
    }
  });

  it("keeps every part of a long split answer within the limits", () => {
    const answer = Array.from({ length: 400 }, (_, i) =>
      i % 10 === 0
        ? `\`\`\`ts\n${"const a = b < c && d > e;\n".repeat(30)}\`\`\``
        : `Paragraph ${i} & more.`,
    ).join("\n\n");
    const parts = splitAnswer(answer);
    expect(parts.length).toBeGreaterThan(3);
    parts.forEach((body, index) => {
      const last = index === parts.length - 1;
      const payload = buildReply({
        body,
        phase: last ? { kind: "completed", modelUsed: "flash" } : { kind: "continued" },
        turnId: "t",
        part: { index },
      });
      expectWithinLimits(payload);
      expect(visibleBody(payload)).toBe(body);
    });
  });
});

describe("the model of a reply that did not complete", () => {
  it("is named on a small line of its own under a failed or stopped reply", () => {
    const failed = buildReply({
      body: "Partial",
      phase: { kind: "failed", error: "tool crashed", modelUsed: "assistant-max" },
      turnId: "t1",
    });
    expect(statusTexts(failed)).toEqual([
      ":x: The run failed: tool crashed",
      "Model: assistant-max",
    ]);
    const stopped = buildReply({
      body: "Partial",
      phase: { kind: "stopped", by: "U0ALICE", modelUsed: "a<b" },
      turnId: "t1",
    });
    expect(statusTexts(stopped)).toEqual([
      ":black_square_for_stop: Stopped by <@U0ALICE>.",
      "Model: a&lt;b",
    ]);
    expect(kinds(stopped)).toEqual(["markdown", "context", "context"]);
  });

  it("is left out when the service did not say", () => {
    const stopped = buildReply({ body: "x", phase: { kind: "stopped" }, turnId: "t1" });
    expect(statusTexts(stopped)).toEqual([":black_square_for_stop: Stopped."]);
  });
});

describe("the feedback buttons", () => {
  const feedbackOf = (p: ReplyPayload) => blocksOf(p).filter((b) => b.type === "context_actions");

  it("go last under a completed answer, naming its turn", () => {
    const payload = buildReply({
      body: "Done.",
      phase: { kind: "completed", modelUsed: "max" },
      turnId: "turn-7",
      notes: ["a note"],
    });
    expect(blocksOf(payload).at(-1)).toEqual(feedbackBlock("turn-7"));
    expect(feedbackOf(payload)).toHaveLength(1);
  });

  it("are on no message of an answer still going, failed, stopped or unreachable, nor on an earlier part", () => {
    const phases: ReplyPhase[] = [
      { kind: "queued", ahead: 1, where: "thread" },
      { kind: "starting" },
      { kind: "working" },
      { kind: "retrying", note: "" },
      { kind: "failed", error: "boom", modelUsed: "max" },
      { kind: "stopped", by: "U1" },
      { kind: "unreachable", message: "down" },
      { kind: "continued" },
    ];
    for (const phase of phases) {
      expect(feedbackOf(buildReply({ body: "text", phase, turnId: "t" })), phase.kind).toEqual([]);
    }
  });
});
