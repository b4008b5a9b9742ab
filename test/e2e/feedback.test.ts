/**
 * Feedback end to end: the feedback buttons under a completed answer (and under nothing
 * else), a press acknowledged at once, recorded as the presser's on the bot's clock, counted in
 * /metrics and thanked with a note only the presser sees, and presses the bot must refuse.
 */
import { afterEach, describe, expect, it } from "vitest";
import { REFUSAL_NOTES } from "../../src/slack/admission/admission.js";
import { FEEDBACK_ACTION_ID } from "../../src/slack/render/feedback-block.js";
import { FEEDBACK_THANKS } from "../../src/slack/surfaces/feedback.js";
import { DEFAULT_TEAM, feedbackPress } from "../../tools/slack-requests.js";
import {
  CHANNEL,
  type Harness,
  type HarnessOptions,
  startHarness,
  USER,
} from "../support/bridge-harness.js";
import { clockAheadBy } from "../support/manual-clock.js";

const BOB = "U0BOB";
const OTHER_CHANNEL = "C0OTHER";
/** The bot's clock runs this far ahead of the system's: a recorded time comes from it. */
const AHEAD_MS = 3 * 86_400_000;

let h: Harness | undefined;
async function harness(options: HarnessOptions = {}): Promise<Harness> {
  h = await startHarness(options);
  return h;
}
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Message = { ts: string; blocks?: unknown };
type Element = {
  type: string;
  action_id?: string;
  positive_button: { value: string };
  negative_button: { value: string };
};

/** The feedback_buttons elements of a message's context_actions blocks. */
function feedbackButtons(message: Message): Element[] {
  const blocks = (message.blocks ?? []) as { type: string; elements?: Element[] }[];
  return blocks.filter((b) => b.type === "context_actions").flatMap((b) => b.elements ?? []);
}

/** Asks a question the simulator answers with `answer`, and waits for the reply to end. */
async function ask(x: Harness, answer: { text?: string; fail?: string }) {
  x.sim.control.enqueueAnswer({ ...answer, tokensPerSecond: Infinity });
  const { ts, threadTs } = await x.mention("<@UBOT> a question");
  await x.settled(CHANNEL, threadTs);
  const turn = await x.bot.stores.turns.byMessage(DEFAULT_TEAM, CHANNEL, ts);
  if (!turn) throw new Error("no turn recorded");
  return { turn, threadTs, replies: x.slack.replies(CHANNEL, threadTs) };
}

async function feedbackCount(x: Harness, value: string): Promise<number> {
  const text = await (await fetch(`${x.opsUrl}/metrics`)).text();
  const line = new RegExp(`^bridge_feedback_total\\{value="${value}"\\} (\\d+)$`, "m").exec(text);
  return Number(line?.[1]);
}

describe("feedback buttons", () => {
  it("are on the last message of a completed answer only, and not under a failed one", async () => {
    const x = await harness();
    const long = Array.from({ length: 80 }, (_, i) => `Paragraph ${i}: ${"words ".repeat(12)}`);
    const { turn, replies } = await ask(x, { text: long.join("\n\n") });
    expect(replies.length).toBeGreaterThan(1);
    expect(replies.slice(0, -1).flatMap(feedbackButtons)).toEqual([]);
    const [buttons, ...more] = feedbackButtons(replies.at(-1) as Message);
    expect(more).toEqual([]);
    expect(buttons).toMatchObject({
      type: "feedback_buttons",
      action_id: FEEDBACK_ACTION_ID,
      positive_button: { value: `${turn.id}:positive` },
      negative_button: { value: `${turn.id}:negative` },
    });

    const failed = await ask(x, { fail: "the tool broke" });
    expect(failed.turn.outcome).toBe("failed");
    expect(failed.replies.flatMap(feedbackButtons)).toEqual([]);
  });

  it("record each person's latest press on the bot's clock, count it and thank only the presser, changing no message", async () => {
    const x = await harness({ clock: clockAheadBy(AHEAD_MS) });
    const { turn, threadTs, replies } = await ask(x, { text: "The answer." });
    const last = replies.at(-1) as Message;
    const [buttons] = feedbackButtons(last);
    if (!buttons) throw new Error("no feedback buttons");
    const buttonValue = (button: "positive" | "negative") =>
      button === "positive" ? buttons.positive_button.value : buttons.negative_button.value;
    const press = (user: string, button: "positive" | "negative") =>
      x.post(
        "action",
        feedbackPress({
          user,
          channel: CHANNEL,
          message_ts: last.ts,
          thread_ts: threadTs,
          action_id: FEEDBACK_ACTION_ID,
          button,
          value: buttonValue(button),
        }),
      );
    const before = JSON.stringify(x.slack.messages(CHANNEL));
    const posts = x.slack.callsTo("chat.postMessage").length;
    const edits = x.slack.callsTo("chat.update").length;

    const pressedFrom = Date.now() + AHEAD_MS;
    const first = await press(USER, "positive");
    expect(first.status).toBe(200);
    expect(first.ms).toBeLessThan(3_000);
    await x.slack.waitFor((s) => s.ephemerals.length === 1);
    const pressedUntil = Date.now() + AHEAD_MS;
    const [recorded] = await x.bot.stores.feedback.forTurn(turn.id);
    expect(recorded).toMatchObject({ turnId: turn.id, user: USER, value: "positive" });
    expect(recorded?.at).toBeGreaterThanOrEqual(pressedFrom);
    expect(recorded?.at).toBeLessThanOrEqual(pressedUntil);
    expect(x.slack.ephemerals[0]).toMatchObject({
      channel: CHANNEL,
      user: USER,
      thread_ts: threadTs,
      text: FEEDBACK_THANKS.positive,
    });
    expect(await feedbackCount(x, "positive")).toBe(1);

    // Alice changes her mind; Bob's press is his own.
    expect((await press(USER, "negative")).status).toBe(200);
    expect((await press(BOB, "positive")).status).toBe(200);
    await x.slack.waitFor((s) => s.ephemerals.length === 3);
    expect(
      (await x.bot.stores.feedback.forTurn(turn.id))
        .map(({ user, value }) => ({ user, value }))
        .sort((a, b) => a.user.localeCompare(b.user)),
    ).toEqual([
      { user: USER, value: "negative" },
      { user: BOB, value: "positive" },
    ]);
    expect(x.slack.ephemerals.slice(1).map(({ user, text }) => ({ user, text }))).toEqual(
      expect.arrayContaining([
        { user: USER, text: FEEDBACK_THANKS.negative },
        { user: BOB, text: FEEDBACK_THANKS.positive },
      ]),
    );
    expect(await feedbackCount(x, "positive")).toBe(2);
    expect(await feedbackCount(x, "negative")).toBe(1);

    // Nothing anyone else sees changed: no post, no edit, every message as it was.
    expect(x.slack.callsTo("chat.postMessage")).toHaveLength(posts);
    expect(x.slack.callsTo("chat.update")).toHaveLength(edits);
    expect(JSON.stringify(x.slack.messages(CHANNEL))).toBe(before);
  });

  it("record nothing for a forged press naming another channel's answer, or a press by someone refused", async () => {
    const x = await harness();
    const { turn, threadTs, replies } = await ask(x, { text: "The answer." });
    const last = replies.at(-1) as Message;
    const value = `${turn.id}:positive`;
    const ignored = () =>
      x.logs.filter((line) => line.includes("feedback press names no answer here")).length;

    const forged = await x.post(
      "action",
      feedbackPress({
        user: USER,
        channel: OTHER_CHANNEL,
        message_ts: last.ts,
        action_id: FEEDBACK_ACTION_ID,
        button: "positive",
        value,
      }),
    );
    expect(forged.status).toBe(200);
    await x.slack.waitFor(() => ignored() === 1);

    const outsider = await x.post(
      "action",
      feedbackPress({
        user: "U0EVE",
        team: "T0OUTSIDE",
        channel: CHANNEL,
        message_ts: last.ts,
        thread_ts: threadTs,
        action_id: FEEDBACK_ACTION_ID,
        button: "positive",
        value,
      }),
    );
    expect(outsider.status).toBe(200);
    await x.slack.waitFor((s) => s.ephemerals.length === 1);
    expect(x.slack.ephemerals).toEqual([
      expect.objectContaining({ user: "U0EVE", channel: CHANNEL, text: REFUSAL_NOTES.outsider }),
    ]);

    expect(await x.bot.stores.feedback.forTurn(turn.id)).toEqual([]);
    expect(await feedbackCount(x, "positive")).toBe(0);
  });
});
