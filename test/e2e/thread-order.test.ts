import { afterEach, describe, expect, it } from "vitest";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";

let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The Markdown each of the bot's replies in the thread shows, in the thread's order. */
function bodies(x: Harness, threadTs: string): string[] {
  return x.slack.replies(CHANNEL, threadTs).map((m) => {
    const block = (m.blocks ?? []).find((b) => b.type === "markdown") as
      | { text?: string }
      | undefined;
    return block?.text ?? m.text ?? "";
  });
}

describe("replies in a thread", () => {
  it.each([
    ["streamed", "auto"],
    ["edited", "off"],
  ])(
    "stand in the order of the questions when follow-ups come quickly (%s)",
    async (_, streaming) => {
      // The run starts late, so the first reply waits for its first words while the follow-ups
      // arrive behind it: their placeholders must not stand above it.
      const x = await startHarness({
        env: { SLACK_STREAMING: streaming },
        simulator: { queueDelayMs: 1_200 },
      });
      h = x;
      const answers = ["First answer.", "Second answer.", "Third answer."];
      for (const text of answers) x.sim.control.enqueueAnswer({ text });
      const { threadTs } = await x.mention("<@UBOT> first question");
      await x.message({ text: "second question", thread_ts: threadTs });
      await x.message({ text: "third question", thread_ts: threadTs });
      await x.slack.waitFor(
        (s) =>
          s.replies(CHANNEL, threadTs).length === 3 &&
          [...bodies(x, threadTs)].sort().join("|") === [...answers].sort().join("|"),
        20_000,
      );
      expect(bodies(x, threadTs)).toEqual(answers);
    },
  );
});
