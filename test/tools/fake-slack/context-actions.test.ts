import { LogLevel, WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Block, contentError, visibleText } from "../../../tools/fake-slack/blocks.js";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

/** A feedback_buttons element as Slack's reference shows it, with `change` applied. */
function feedbackButtons(change: Record<string, unknown> = {}): Record<string, unknown> {
  const button = (text: string, value: string) => ({
    text: { type: "plain_text", text },
    value,
    accessibility_label: `${value} label`,
  });
  return {
    type: "feedback_buttons",
    action_id: "feedback",
    positive_button: button("👍", "good"),
    negative_button: button("👎", "bad"),
    ...change,
  };
}

const contextActions = (...elements: unknown[]): Block => ({ type: "context_actions", elements });
const errorOf = (...blocks: Block[]) => contentError({ text: "answer", blocks });

describe("the context_actions block", () => {
  it("takes feedback buttons and icon buttons, one to five of them", () => {
    expect(errorOf(contextActions(feedbackButtons()))).toBeUndefined();
    const icon = { type: "icon_button", icon: "trash", text: { type: "plain_text", text: "x" } };
    expect(errorOf(contextActions(feedbackButtons(), icon))).toBeUndefined();
    expect(errorOf(contextActions(...Array(5).fill(icon)))).toBeUndefined();
    expect(errorOf(contextActions(...Array(6).fill(icon)))).toBe("invalid_blocks");
    expect(errorOf(contextActions())).toBe("invalid_blocks");
    expect(errorOf({ type: "context_actions" })).toBe("invalid_blocks");
    const button = { type: "button", text: { type: "plain_text", text: "Stop" }, value: "v" };
    expect(errorOf(contextActions(button))).toBe("invalid_blocks");
  });

  it("refuses feedback buttons that break the element's rules", () => {
    const good = feedbackButtons().positive_button as Record<string, unknown>;
    const broken: Record<string, unknown>[] = [
      { positive_button: undefined },
      { negative_button: "👎" },
      { positive_button: { ...good, text: { type: "mrkdwn", text: "*up*" } } },
      { positive_button: { ...good, text: { type: "plain_text", text: "u".repeat(76) } } },
      { positive_button: { ...good, value: undefined } },
      { positive_button: { ...good, value: "" } },
      { positive_button: { ...good, value: "v".repeat(2_001) } },
      { positive_button: { ...good, accessibility_label: "l".repeat(76) } },
      { action_id: "a".repeat(256) },
    ];
    for (const change of broken) {
      expect(errorOf(contextActions(feedbackButtons(change))), JSON.stringify(change)).toBe(
        "invalid_blocks",
      );
    }
    const longest = {
      ...good,
      value: "v".repeat(2_000),
      text: { type: "plain_text", text: "u".repeat(75) },
    };
    expect(errorOf(contextActions(feedbackButtons({ positive_button: longest })))).toBeUndefined();
    expect(errorOf(contextActions(feedbackButtons({ action_id: undefined })))).toBeUndefined();
  });

  it("is the only place for feedback buttons, as in Slack", () => {
    expect(errorOf({ type: "actions", elements: [feedbackButtons()] })).toBe("invalid_blocks");
    expect(errorOf({ type: "context", elements: [feedbackButtons()] })).toBe("invalid_blocks");
    const section = {
      type: "section",
      text: { type: "mrkdwn", text: "x" },
      accessory: feedbackButtons(),
    };
    expect(errorOf(section)).toBe("invalid_blocks");
  });
});

describe("posting and editing with feedback buttons through the real WebClient", () => {
  let fake: FakeSlack;
  let web: WebClient;
  beforeAll(async () => {
    fake = await startFakeSlack();
    web = new WebClient("xoxb-test", {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 0 },
      logLevel: LogLevel.ERROR,
    });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const errorCode = (call: Promise<unknown>) =>
    call.then(
      () => undefined,
      (e: { data?: { error?: string } }) => e.data?.error,
    );

  it("keeps them in a context_actions block and refuses them anywhere else", async () => {
    const blocks = [{ type: "markdown", text: "answer" }, contextActions(feedbackButtons())];
    const posted = await web.chat.postMessage({ channel: "C1", text: "answer", blocks });
    expect(fake.messages("C1")).toMatchObject([{ ts: posted.ts, blocks }]);
    // The buttons carry no text a person reads as the message.
    expect(fake.messages("C1").map((m) => visibleText(m))).toEqual(["answer"]);

    const misplaced = [{ type: "actions", elements: [feedbackButtons()] }];
    expect(
      await errorCode(web.chat.postMessage({ channel: "C1", text: "x", blocks: misplaced })),
    ).toBe("invalid_blocks");
    expect(
      await errorCode(
        web.chat.update({ channel: "C1", ts: posted.ts as string, text: "x", blocks: misplaced }),
      ),
    ).toBe("invalid_blocks");
    expect(fake.messages("C1")).toMatchObject([{ ts: posted.ts, blocks, edits: 0 }]);
  });
});
