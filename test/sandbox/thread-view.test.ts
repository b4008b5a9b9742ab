import { describe, expect, it } from "vitest";
import { layout } from "../../sandbox/layout.js";
import {
  answerText,
  type ChatItem,
  paragraphOf,
  statusText,
  stopTurnOf,
} from "../../sandbox/thread-view.js";
import { buildReply, type ReplyInput } from "../../src/slack/render/reply-blocks.js";
import type { Block } from "../../tools/fake-slack/blocks.js";

const ctx = { botUserId: "UBOT", userId: "U0YOU" };

function reply(input: Partial<ReplyInput> & Pick<ReplyInput, "phase">, ts = "1.000002"): ChatItem {
  const payload = buildReply({ body: "", turnId: "turn-1", ...input });
  return { kind: "reply", ts, text: payload.text, blocks: payload.blocks as Block[] };
}

const shown = (item: ChatItem, columns = 80) => layout([paragraphOf(item, ctx)], columns, false);

describe("a reply as the chat shows it", () => {
  it("shows the answer so far, the status line and [Stop] while the run goes on", () => {
    const item = reply({ body: "## Plan\n\n- one", phase: { kind: "working" } });
    expect(shown(item)).toEqual([
      "assistant> ## Plan",
      "           ",
      "           - one",
      "           · Writing…  [Stop]",
    ]);
    expect(stopTurnOf(item)).toBe("turn-1");
  });

  it("shows a placeholder's status with [Stop] before any text", () => {
    const item = reply({ body: "", phase: { kind: "queued", ahead: 2, where: "thread" } });
    expect(shown(item)).toEqual(["assistant> · Queued — 2 ahead in this thread  [Stop]"]);
  });

  it("shows the final answer with the model and no Stop button", () => {
    const item = reply({ body: "Done.", phase: { kind: "completed", modelUsed: "max" } });
    expect(shown(item)).toEqual(["assistant> Done.", "           · Answered by max"]);
    expect(stopTurnOf(item)).toBeUndefined();
  });

  it("shows who stopped it, and a failure as an error line", () => {
    expect(shown(reply({ body: "Part", phase: { kind: "stopped", by: "U0YOU" } }))).toEqual([
      "assistant> Part",
      "           · Stopped by @you.",
    ]);
    const failed = reply({ body: "", phase: { kind: "failed", error: "boom <&>" } });
    expect(shown(failed)).toEqual(["assistant> The run failed: boom <&>"]);
    expect(statusText(failed, ctx)).toBe("The run failed: boom <&>");
  });

  it("shows a later part of a long answer as a message of its own", () => {
    const item = reply({ body: "more", phase: { kind: "continued" } });
    expect(shown(item)).toEqual(["assistant> more"]);
  });
});

describe("other entries", () => {
  it("shows the person's message with mentions and entities resolved", () => {
    const item: ChatItem = {
      kind: "person",
      ts: "1.000001",
      text: "<@UBOT> is 1 &lt; 2 &amp;&amp; <@U9|bob>?",
    };
    expect(shown(item)).toEqual(["you> @assistant is 1 < 2 && @bob?"]);
  });

  it("shows ephemeral answers dimmed as only for the person, mrkdwn rendered", () => {
    const item: ChatItem = {
      kind: "ephemeral",
      ts: "1.000003",
      text: ":warning: Model set to *max*.\n• <https://x.example/a|reply>: being written",
    };
    expect(shown(item)).toEqual([
      "(only you) Model set to max.",
      "           • reply: being written",
    ]);
    const colored = layout([paragraphOf(item, ctx)], 80, true);
    expect(colored[0]).toContain("\x1b[2m");
  });
});

describe("answerText", () => {
  it("joins the Markdown of every reply message, leaving status lines out", () => {
    const parts = [
      reply({ body: "first part", phase: { kind: "continued" } }, "1.1"),
      reply({ body: "second part", phase: { kind: "completed", modelUsed: "m" } }, "1.2"),
    ];
    expect(answerText(parts, ctx)).toBe("first part\nsecond part");
  });
});
