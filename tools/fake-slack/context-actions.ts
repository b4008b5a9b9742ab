/**
 * The `context_actions` block as Slack checks it (Block Kit reference): one to five
 * `feedback_buttons` or `icon_button` elements, and a `feedback_buttons` element nowhere
 * else. A message that breaks a rule is refused with `invalid_blocks`, as Slack refuses it.
 */
const MAX_ELEMENTS = 5;
const MAX_BUTTON_TEXT = 75;
const MAX_LABEL = 75;
const MAX_VALUE = 2_000;
const MAX_ID = 255;

type Record_ = Record<string, unknown>;
/** A block of a message (blocks.ts's Block, which imports this file). */
type Block = { type: string } & Record_;

function isRecord(value: unknown): value is Record_ {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A string of 1..max characters (`optional`: or absent). */
function sized(value: unknown, max: number, optional = false): boolean {
  if (value === undefined) return optional;
  return typeof value === "string" && value.length >= 1 && value.length <= max;
}

/** One of the two buttons: plain_text text, a value, maybe a label for screen readers. */
function buttonOk(button: unknown): boolean {
  if (!isRecord(button) || !isRecord(button.text)) return false;
  return (
    button.text.type === "plain_text" &&
    sized(button.text.text, MAX_BUTTON_TEXT) &&
    sized(button.value, MAX_VALUE) &&
    sized(button.accessibility_label, MAX_LABEL, true)
  );
}

function feedbackButtonsOk(element: Record_): boolean {
  return (
    sized(element.action_id, MAX_ID, true) &&
    buttonOk(element.positive_button) &&
    buttonOk(element.negative_button)
  );
}

function elementOk(element: unknown): boolean {
  if (!isRecord(element)) return false;
  if (element.type === "feedback_buttons") return feedbackButtonsOk(element);
  // Icon buttons are not the bot's; the fake checks only what makes one.
  return element.type === "icon_button" && typeof element.icon === "string";
}

/** Whether `value` holds a `feedback_buttons` element at any depth. */
function holdsFeedbackButtons(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsFeedbackButtons);
  if (!isRecord(value)) return false;
  return value.type === "feedback_buttons" || Object.values(value).some(holdsFeedbackButtons);
}

/** The Slack error for this block's use of context actions, or undefined when it is fine. */
export function contextActionsError(block: Block): string | undefined {
  if (block.type !== "context_actions") {
    return holdsFeedbackButtons(block) ? "invalid_blocks" : undefined;
  }
  const { elements } = block;
  if (!Array.isArray(elements) || elements.length < 1 || elements.length > MAX_ELEMENTS) {
    return "invalid_blocks";
  }
  if (!sized(block.block_id, MAX_ID, true)) return "invalid_blocks";
  return elements.every(elementOk) ? undefined : "invalid_blocks";
}
