import { describe, expect, it } from "vitest";
import type { ReplyView } from "../../../src/bridge/ports.js";
import { FirstWords, wordless } from "../../../src/slack/replies/first-words.js";
import { ManualClock } from "../../support/manual-clock.js";

const view = (body: string, kind: "starting" | "working" | "retrying" = "working"): ReplyView =>
  ({
    body,
    phase: kind === "retrying" ? { kind, note: "still trying" } : { kind },
    notes: [],
  }) as ReplyView;

describe("wordless", () => {
  it("is a starting or working reply with no whole word a growing answer could show", () => {
    expect(wordless(view(""))).toBe(true);
    expect(wordless(view("## "))).toBe(true);
    expect(wordless(view("## Hi"))).toBe(true);
    expect(wordless(view("## Hi "))).toBe(true);
    expect(wordless(view("## Hi t"))).toBe(false);
    expect(wordless(view("", "retrying"))).toBe(false);
    expect(
      wordless({ ...view(""), steps: [{ id: "s", title: "Search", status: "in_progress" }] }),
    ).toBe(false);
  });
});

describe("FirstWords", () => {
  it("waits until words come, or until the wait is over", async () => {
    const clock = new ManualClock();
    const words = new FirstWords(clock, 1_000);
    let came = false;
    void words.wait(view("")).then(() => {
      came = true;
    });
    words.seen(view("## Hi"));
    await clock.advance(500);
    expect(came).toBe(false);
    words.seen(view("## Hi t"));
    await clock.advance(0);
    expect(came).toBe(true);

    let late = false;
    void new FirstWords(clock, 1_000).wait(view("")).then(() => {
      late = true;
    });
    await clock.advance(999);
    expect(late).toBe(false);
    await clock.advance(1);
    expect(late).toBe(true);
  });

  it("does not wait without a wait, or for a view that has something to show", async () => {
    const clock = new ManualClock();
    await new FirstWords(clock, 0).wait(view(""));
    await new FirstWords(clock, 1_000).wait(view("Hello there"));
    expect(clock.pending).toBe(0);
  });
});
