import type { types as Slack } from "@slack/bolt";
import type { FeedbackValue } from "../../store/stores.js";

/**
 * Slack's feedback buttons under a finished answer: a `context_actions` block holding one
 * `feedback_buttons` element. The one place that builds them, for every reply strategy (the
 * last message of a paced reply, a native stream's `chat.stopStream` blocks), and that reads
 * back what a press sends. No Slack calls here.
 */

/** The feedback buttons' `action_id`; the interactivity listener (feedback.ts) matches on it. */
export const FEEDBACK_ACTION_ID = "answer_feedback";

/**
 * A button's value names the turn and the verdict, `<turn id>:positive`: a press carries only
 * the pressed button's value, so the turn must be in it. Slack allows 2,000 characters; a
 * turn id is a UUID, so a value is under 50.
 */
const VALUE_MAX = 2_000;
const VALUE = /^(.+):(positive|negative)$/s;

/** The value of one button: the turn it judges and the verdict. */
export function feedbackValue(turnId: string, value: FeedbackValue): string {
  return `${turnId}:${value}`;
}

/** What a pressed button's value says, or undefined when it is not one of ours. */
export function readFeedbackValue(
  raw: unknown,
): { turnId: string; value: FeedbackValue } | undefined {
  if (typeof raw !== "string" || raw.length > VALUE_MAX) return undefined;
  const match = VALUE.exec(raw);
  if (!match) return undefined;
  return { turnId: match[1] as string, value: match[2] as FeedbackValue };
}

/**
 * The block, last under an answer. No `block_id`: Slack makes a fresh one, as it wants for
 * every version of a message. Texts and labels stay within Slack's 75 characters.
 */
export function feedbackBlock(turnId: string): Slack.ContextActionsBlock {
  return {
    type: "context_actions",
    elements: [
      {
        type: "feedback_buttons",
        action_id: FEEDBACK_ACTION_ID,
        positive_button: {
          text: { type: "plain_text", text: "👍" },
          accessibility_label: "This answer helped",
          value: feedbackValue(turnId, "positive"),
        },
        negative_button: {
          text: { type: "plain_text", text: "👎" },
          accessibility_label: "This answer did not help",
          value: feedbackValue(turnId, "negative"),
        },
      },
    ],
  };
}

/**
 * The feedback block for a reply that ends in `phase`, or undefined: only an answer the
 * assistant completed is the assistant's to judge. A failed, stopped or unreachable ending is
 * the bridge's own sentence (bridge_turns_total counts those), and a person who stopped an
 * answer has said what they thought of it. Every strategy asks here, so the rule is one.
 */
export function feedbackFor(
  phase: { kind: string },
  turnId: string,
): Slack.ContextActionsBlock | undefined {
  return phase.kind === "completed" ? feedbackBlock(turnId) : undefined;
}
