import { afterEach, describe, expect, it, vi } from "vitest";
import { Observer } from "../../bench/observer.js";
import { OutsideView } from "../../bench/outside-view.js";
import { pieces } from "../../bench/workload.js";
import { type Harness, startHarness } from "../support/bridge-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * The bench's first-complete-word figure and the outside view's, on a small run of the real
 * bot: they must agree. The first answer is cut by the simulator's own word-like tokens, so
 * its first piece is a bare "##" that shows no text; the second is cut into exact 4-character
 * pieces ("## C", "achi", "ng\n\n"…), so its first word "Caching" is whole only with the third.
 */
describe("the bench and an outside view of the same run", () => {
  it("agree on when each answer's first complete word appeared in Slack", async () => {
    h = await startHarness({ simulator: { queueDelayMs: 10, answer: { tokensPerSecond: 50 } } });
    const { sim, slack } = h;
    const observer = new Observer(sim, slack);
    const outside = new OutsideView(sim, slack);
    try {
      const logging = "## Structured logging\n\nOne event per line, as JSON, with the request id.";
      const caching = "## Caching\n\nKeep what you read for as long as it stays true.";
      sim.control.enqueueAnswer({ text: logging });
      sim.control.enqueueAnswer({ chunks: pieces(caching, 4) });
      for (const index of [0, 1]) {
        const question = `question ${index}: what should I do?`;
        const { ts } = await h.mention(`<@UBOT> ${question}`, { channel: `C00000${index}` });
        observer.watch({ index, channel: `C00000${index}`, threadTs: ts, question });
      }
      await vi.waitFor(() => expect(observer.open()).toBe(0), { timeout: 15_000, interval: 50 });

      const seen = outside.firstWord();
      expect(seen.map((s) => s.question).sort()).toEqual([
        "question 0: what should I do?",
        "question 1: what should I do?",
      ]);
      for (const conversation of observer.watchedConversations()) {
        const measured = observer.measure(conversation, Date.now());
        const ours = measured?.firstWordMs;
        const theirs = seen.find((s) => s.question === conversation.question)?.ms;
        expect(ours).toBeDefined();
        expect(theirs).toBeDefined();
        expect(Math.abs((ours as number) - (theirs as number))).toBeLessThanOrEqual(1);
        // The person asked before the service wrote: from the question it is never less.
        expect(measured?.askedFirstWordMs).toBeGreaterThanOrEqual(ours as number);
        // Shown whole, after its first word; from the question, after the last piece's figure.
        expect(measured?.completeAt).toBeGreaterThanOrEqual(measured?.firstWordAt as number);
        expect(measured?.askedCompleteMs).toBeGreaterThanOrEqual(
          measured?.afterLastPieceMs as number,
        );
      }
    } finally {
      observer.close();
      outside.close();
    }
  });
});
