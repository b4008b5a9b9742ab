import { describe, expect, it } from "vitest";
import { answerPart, follow, readable, type Step, shownChars } from "../../bench/visibility.js";

describe("what of an answer a Slack message shows", () => {
  const answer = readable("## Structured logging\n\n- **Fields**: one per line");

  it("counts letters and digits only: markup alone shows no text", () => {
    expect(readable("## ")).toBe("");
    expect(readable("- **Fields** 1—2 `x`")).toBe("Fields12x");
    expect(shownChars(answer, "##")).toBe(0);
    expect(shownChars(answer, "## S")).toBe(1);
  });

  it("reads the answer's Markdown, not the status line, buttons or a placeholder's blocks", () => {
    const interim = {
      text: "Structured",
      blocks: [
        { type: "markdown", text: "## Structured" },
        { type: "context", elements: [{ type: "mrkdwn", text: ":writing_hand: Writing…" }] },
        { type: "actions", elements: [{ type: "button", action_id: "stop_run" }] },
      ],
    };
    expect(answerPart(interim)).toBe("## Structured");
    expect(shownChars(answer, answerPart(interim))).toBe("Structured".length);
    const placeholder = {
      text: "Starting…",
      blocks: [{ type: "context", elements: [{ type: "mrkdwn", text: "Starting…" }] }],
    };
    expect(answerPart(placeholder)).toBe("");
    // A streamed message has no blocks: its text is the Markdown.
    expect(answerPart({ text: "## Structured log" })).toBe("## Structured log");
    expect(answerPart({ text: "x", blocks: [{ type: "section", text: { text: "## Str" } }] })).toBe(
      "## Str",
    );
  });

  it("counts only what matches the answer from its start", () => {
    expect(shownChars(answer, "## Structured logging\n\nAnswered by flash")).toBe(17);
    expect(shownChars(answer, "Starting…")).toBe(2);
    expect(shownChars(answer, "## Structured logging\n\n- **Fields**: one per line")).toBe(
      answer.length,
    );
  });
});

describe("following one answer", () => {
  // 10 readable characters, 2 per piece every 100 ms from t = 1,000 (the last at 1,400).
  const written: Step[] = [0, 1, 2, 3, 4].map((i) => ({ at: 1_000 + i * 100, count: 2 * i + 2 }));

  it("measures first text from the first piece to the first state with answer text", () => {
    const shown: Step[] = [
      { at: 900, count: 0 }, // the placeholder
      { at: 1_010, count: 0 }, // a bare "##"
      { at: 2_010, count: 10 },
    ];
    const p = follow(written, shown, 1_000, 5_000);
    expect(p.firstTextMs).toBe(1_010);
    expect(p.completeAt).toBe(2_010);
    // Just before 2,010 nothing was shown of what was written at 1,000.
    expect(p.lagMaxMs).toBe(1_010);
  });

  it("is the age of the oldest character not yet shown, at its worst just before a change", () => {
    const shown: Step[] = [
      { at: 1_005, count: 2 },
      { at: 1_350, count: 8 },
      { at: 1_900, count: 10 },
    ];
    const p = follow(written, shown, 1_000, 5_000, 100);
    expect(p.firstTextMs).toBe(5);
    // Before 1,350: the 3rd character, written at 1,100, not shown: 250 ms. Before 1,900: the
    // 9th, written at 1,400: 500 ms.
    expect(p.lagMaxMs).toBe(500);
    // Sampled every 100 ms from 1,000 to 1,900, when the whole answer shows.
    expect(p.lagSamplesMs).toEqual([0, 0, 100, 200, 0, 100, 200, 300, 400, 0]);
  });

  it("keeps growing until the end of observation for an answer never shown whole", () => {
    const p = follow(written, [{ at: 1_005, count: 2 }], 1_000, 3_000, 1_000);
    expect(p.completeAt).toBeUndefined();
    expect(p.lagMaxMs).toBe(1_900);
    expect(p.lagSamplesMs).toEqual([0, 900, 1_900]);
  });

  it("has no first text when nothing was ever shown", () => {
    const p = follow(written, [{ at: 1_200, count: 0 }], 1_000, 2_000, 1_000);
    expect(p.firstTextMs).toBeUndefined();
    expect(p.lagMaxMs).toBe(1_000);
  });
});
