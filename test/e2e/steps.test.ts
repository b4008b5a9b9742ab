import { afterEach, describe, expect, it } from "vitest";
import type { MessageContent } from "../../tools/fake-slack/blocks.js";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("what the assistant is doing", () => {
  it("shows the step in progress in the status line while the run works, and ends with the answer only", async () => {
    const x = await startHarness({ simulator: { answer: { tokensPerSecond: 5 } } });
    h = x;
    const answer = "Rate limits are per method, per workspace.";
    const searching = { id: "search", title: "Searching the docs", status: "in_progress" } as const;
    const checking = { id: "check", title: "Checking the tiers", status: "in_progress" } as const;
    x.sim.control.enqueueAnswer({
      text: answer,
      steps: [
        searching,
        { id: "cite", title: "Citing sources", status: "pending" },
        { ...searching, status: "complete", details: "3 pages", atChars: 20 },
        { ...checking, atChars: 20 },
        { ...checking, status: "complete", atChars: answer.length },
      ],
    });
    const { threadTs } = await x.mention("<@UBOT> how do rate limits work?");
    const transcript = await x.settled(CHANNEL, threadTs);

    const shown = x.slack
      .callsTo("chat.update")
      .map((call) => x.slack.visibleText(call.args as unknown as MessageContent));
    // While it ran, an edit named the step in progress instead of "Working…".
    expect(shown.some((text) => text.includes(":gear: Searching the docs…"))).toBe(true);
    // The steps cost no edit of their own beyond the pacing: at most one a second.
    const times = x.slack.callsTo("chat.update").map((call) => call.at);
    for (let i = 1; i < times.length - 1; i++) {
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(900);
    }
    // The end is the answer exactly and what answered it; no step is left in it.
    expect(transcript).toEqual([`${answer}\nAnswered by assistant-standard`]);
    const [final] = x.slack.replies(CHANNEL, threadTs);
    const content = JSON.stringify({ text: final?.text, blocks: final?.blocks });
    expect(content).toContain(answer);
    expect(content).not.toMatch(/gear|Searching|Checking|Citing/u);
  });
});
