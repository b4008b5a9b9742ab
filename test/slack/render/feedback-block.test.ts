import { describe, expect, it } from "vitest";
import {
  FEEDBACK_ACTION_ID,
  feedbackBlock,
  feedbackFor,
  feedbackValue,
  readFeedbackValue,
} from "../../../src/slack/render/feedback-block.js";

const TURN = "0b7e4c1a-9f3d-4c55-8a2e-6d1f0c9b3a71";

describe("the feedback block", () => {
  it("is a context_actions block with one feedback_buttons element naming the turn", () => {
    expect(feedbackBlock(TURN)).toEqual({
      type: "context_actions",
      elements: [
        {
          type: "feedback_buttons",
          action_id: FEEDBACK_ACTION_ID,
          positive_button: {
            text: { type: "plain_text", text: "👍" },
            accessibility_label: "This answer helped",
            value: `${TURN}:positive`,
          },
          negative_button: {
            text: { type: "plain_text", text: "👎" },
            accessibility_label: "This answer did not help",
            value: `${TURN}:negative`,
          },
        },
      ],
    });
    // Far within Slack's 2,000 characters for a value.
    expect(feedbackValue(TURN, "negative").length).toBeLessThan(50);
  });

  it("reads back the turn and the verdict of a pressed button, and nothing else", () => {
    expect(readFeedbackValue(feedbackValue(TURN, "positive"))).toEqual({
      turnId: TURN,
      value: "positive",
    });
    expect(readFeedbackValue(`${TURN}:negative`)).toEqual({ turnId: TURN, value: "negative" });
    for (const raw of [
      undefined,
      42,
      "",
      TURN,
      `${TURN}:meh`,
      ":positive",
      `${TURN}:positive `,
      `${"x".repeat(2_000)}:positive`,
    ]) {
      expect(readFeedbackValue(raw), String(raw)).toBeUndefined();
    }
  });
});

describe("feedbackFor", () => {
  it("gives the block for a completed answer only, whichever strategy asks", () => {
    expect(feedbackFor({ kind: "completed" }, TURN)).toEqual(feedbackBlock(TURN));
    for (const kind of ["failed", "stopped", "unreachable", "working", "continued"]) {
      expect(feedbackFor({ kind }, TURN), kind).toBeUndefined();
    }
  });
});
