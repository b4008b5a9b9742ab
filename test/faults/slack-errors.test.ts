import { afterEach, describe, expect, it } from "vitest";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";
import { SkippableClock } from "../support/manual-clock.js";

let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ANSWER = Array.from({ length: 30 }, (_, i) => `- point ${i + 1}: keep going`).join("\n");

describe("Slack answering 429 and 500", () => {
  it("waits out failed posts and edits, and the final text still arrives exactly", async () => {
    // Slack's clock and the bot's are one, and a Retry-After passes when the test says so.
    const clock = new SkippableClock();
    h = await startHarness({
      clock,
      slack: { now: () => clock.now() },
      simulator: { answer: { tokensPerSecond: 100 } },
    });
    const { slack } = h;
    slack.failNext("chat.postMessage", { status: 500, count: 1 });
    slack.failNext("chat.update", { status: 429, retryAfter: 1, count: 2 });
    slack.failNext("chat.update", { status: 200, error: "internal_error", count: 1 });
    slack.failNext("chat.update", { status: 500, count: 2 });
    h.sim.control.enqueueAnswer({ text: ANSWER });
    const { threadTs } = await h.mention("<@UBOT> through the storm");
    for (const seen of [1, 2]) {
      await slack.waitFor(
        (s) => s.callsTo("chat.update").filter((c) => c.status === 429).length === seen,
      );
      clock.skip(1_000);
    }
    const transcript = await h.settled(CHANNEL, threadTs, 1, 20_000);
    expect(transcript).toHaveLength(1);
    expect(transcript[0]).toContain(ANSWER);
    expect(transcript[0]?.split("point 30")).toHaveLength(2);
    const failed = slack.calls.filter((c) => !c.ok).map((c) => `${c.method} ${c.status}`);
    expect(failed).toEqual([
      "chat.postMessage 500",
      "chat.update 429",
      "chat.update 429",
      "chat.update 200",
      "chat.update 500",
      "chat.update 500",
    ]);
    expect(slack.callsTo("chat.postMessage").filter((c) => c.ok)).toHaveLength(1);
    // After a 429 the bot waited for Retry-After (on its clock) before its next edit.
    const updates = slack.callsTo("chat.update");
    const limited = updates.findIndex((c) => c.status === 429);
    const after = updates.slice(limited + 1).find((c) => c.status !== 429);
    expect((after?.at ?? 0) - (updates[limited]?.at ?? 0)).toBeGreaterThanOrEqual(900);
    expect(h.sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("shows each message once when Slack takes a post but answers 500: placeholder and continuation", async () => {
    h = await startHarness({ simulator: { answer: { tokensPerSecond: 4_000 } } });
    const { slack } = h;
    const paragraph = (i: number) => `Paragraph ${i}: ${"the quick brown fox ".repeat(20)}`;
    const answer = Array.from({ length: 16 }, (_, i) => paragraph(i)).join("\n\n");
    expect(answer.length).toBeGreaterThan(6_000);
    h.sim.control.enqueueAnswer({ text: answer });
    slack.failNext("chat.postMessage", { status: 500, landed: true });
    const { threadTs } = await h.mention("<@UBOT> a long one, please");
    // The placeholder landed and its answer was a 500; the next post is the continuation.
    await slack.waitFor((s) => s.callsTo("chat.postMessage").length === 1);
    slack.failNext("chat.postMessage", { status: 500, landed: true });
    await h.settled(CHANNEL, threadTs, 2, 20_000);
    const replies = slack.replies(CHANNEL, threadTs);
    const bodies = replies.map((m) => {
      const block = (m.blocks ?? []).find((b) => b.type === "markdown") as { text?: string };
      return block?.text ?? "";
    });
    expect(bodies.join("\n")).toBe(answer);
    expect(replies).toHaveLength(2);
    // Two posts, each answered 500 after it landed; each retry found its message instead.
    expect(slack.callsTo("chat.postMessage").map((c) => c.status)).toEqual([500, 500]);
    expect(slack.callsTo("conversations.replies").length).toBeGreaterThanOrEqual(2);
  });
});
