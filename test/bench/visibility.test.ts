import { describe, expect, it } from "vitest";
import {
  answerPart,
  follow,
  readable,
  type Step,
  shownChars,
  type Written,
  wholeWords,
  wordEnds,
} from "../../bench/visibility.js";

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

describe("whole words", () => {
  it("ends a word where a run of letters and digits ends, in readable characters", () => {
    expect(wordEnds("The quick fox")).toEqual([3, 8, 11]);
    expect(wordEnds("## Structured logging\n\n- **Fields**: one per line")).toEqual([
      10, 17, 23, 26, 29, 33,
    ]);
    // Punctuation ends a word as a space does; the last word ends the answer.
    expect(wordEnds("Done. 1,500 chars")).toEqual([4, 5, 8, 13]);
    expect(wordEnds("## ")).toEqual([]);
    expect(wordEnds("")).toEqual([]);
  });

  it("counts in the units of readable(), so the last end is the readable length", () => {
    // 𝐀 is one letter and two UTF-16 units, as readable("𝐀b c").length counts it.
    const text = "𝐀b c — é!";
    expect(wordEnds(text)).toEqual([3, 4, 5]);
    expect(wordEnds(text).at(-1)).toBe(readable(text).length);
  });

  it("shows only up to the end of the last whole word", () => {
    const ends = [3, 8, 11];
    expect([0, 2, 3, 5, 7, 8, 10, 11, 12].map((chars) => wholeWords(ends, chars))).toEqual([
      0, 0, 3, 3, 3, 8, 8, 11, 11,
    ]);
    expect(wholeWords([], 5)).toBe(0);
  });

  it('counts "The qu" of "The quick fox" as "The"', () => {
    const answer = "The quick fox";
    const chars = shownChars(readable(answer), "The qu");
    expect(chars).toBe(5);
    expect(wholeWords(wordEnds(answer), chars)).toBe(3);
    expect(wholeWords(wordEnds(answer), shownChars(readable(answer), "The quick f"))).toBe(8);
  });
});

describe("following one answer", () => {
  // 10 readable characters, 2 per piece every 100 ms from t = 1,000 (the last at 1,400), in
  // five two-letter words.
  const written: Written = {
    steps: [0, 1, 2, 3, 4].map((i) => ({ at: 1_000 + i * 100, count: 2 * i + 2 })),
    wordEnds: [2, 4, 6, 8, 10],
    askedAt: 800,
  };

  it("measures first word from the first piece to the first state with answer text", () => {
    const shown: Step[] = [
      { at: 900, count: 0 }, // the placeholder
      { at: 1_010, count: 0 }, // a bare "##"
      { at: 2_010, count: 10 },
    ];
    const p = follow(written, shown, 5_000);
    expect(p.firstWordMs).toBe(1_010);
    expect(p.askedFirstWordMs).toBe(1_210);
    expect(p.completeAt).toBe(2_010);
    // The last piece left at 1,400; the question reached Slack at 800.
    expect(p.afterLastPieceMs).toBe(610);
    expect(p.askedCompleteMs).toBe(1_210);
    // Just before 2,010 nothing was shown of what was written at 1,000.
    expect(p.lagMaxMs).toBe(1_010);
  });

  it("is the age of the oldest character not yet shown, at its worst just before a change", () => {
    const shown: Step[] = [
      { at: 1_005, count: 2 },
      { at: 1_350, count: 8 },
      { at: 1_900, count: 10 },
    ];
    const p = follow(written, shown, 5_000, 100);
    expect(p.firstWordMs).toBe(5);
    // Before 1,350: the 3rd character, written at 1,100, not shown: 250 ms. Before 1,900: the
    // 9th, written at 1,400: 500 ms.
    expect(p.lagMaxMs).toBe(500);
    // Sampled every 100 ms from 1,000 to 1,900, when the whole answer shows.
    expect(p.lagSamplesMs).toEqual([0, 0, 100, 200, 0, 100, 200, 300, 400, 0]);
  });

  it("keeps growing until the end of observation for an answer never shown whole", () => {
    const p = follow(written, [{ at: 1_005, count: 2 }], 3_000, 1_000);
    expect(p.completeAt).toBeUndefined();
    expect(p.afterLastPieceMs).toBeUndefined();
    expect(p.askedCompleteMs).toBeUndefined();
    expect(p.lagMaxMs).toBe(1_900);
    expect(p.lagSamplesMs).toEqual([0, 900, 1_900]);
  });

  it("has no first word when nothing was ever shown", () => {
    const p = follow(written, [{ at: 1_200, count: 0 }], 2_000, 1_000);
    expect(p.firstWordMs).toBeUndefined();
    expect(p.askedFirstWordMs).toBeUndefined();
    expect(p.lagMaxMs).toBe(1_000);
  });

  it("counts nothing from the question when its time is unknown", () => {
    const p = follow({ ...written, askedAt: undefined }, [{ at: 2_000, count: 10 }], 5_000);
    expect(p.firstWordMs).toBe(1_000);
    expect(p.askedFirstWordMs).toBeUndefined();
    expect(p.afterLastPieceMs).toBe(600);
    expect(p.askedCompleteMs).toBeUndefined();
  });
});

describe("following one answer in whole words", () => {
  // "The quick fox" in pieces "The ", "quic", "k fo", "x", 20 ms apart from t = 1,000; the
  // question reached Slack at 900. Readable: T h e | q u i c k | f o x (words end at 3, 8, 11).
  const answer = "The quick fox";
  const written: Written = {
    steps: [
      { at: 1_000, count: 3 },
      { at: 1_020, count: 7 },
      { at: 1_040, count: 10 },
      { at: 1_060, count: 11 },
    ],
    wordEnds: wordEnds(answer),
    askedAt: 900,
  };
  const state = (at: number, text: string): Step => ({
    at,
    count: shownChars(readable(answer), text),
  });
  const shown = [
    state(1_010, "Th"),
    state(1_030, "The qu"),
    state(1_100, "The quick fo"),
    state(1_150, "The quick fox"),
  ];

  it("counts the first word only once it shows whole", () => {
    const p = follow(written, shown, 5_000, 50);
    // "Th" at 1,010 is a fragment: the first word is "The", at 1,030.
    expect(p.firstWordAt).toBe(1_030);
    expect(p.firstWordMs).toBe(30);
    expect(p.askedFirstWordMs).toBe(130);
  });

  it("times the full text from the last piece and from the question", () => {
    const p = follow(written, shown, 5_000, 50);
    expect(p.completeAt).toBe(1_150);
    expect(p.afterLastPieceMs).toBe(90);
    expect(p.askedCompleteMs).toBe(250);
  });

  it("counts a fragment as not shown in the lag", () => {
    const p = follow(written, shown, 5_000, 50);
    // Just before 1,150 "The quick" shows, not "fo": the "f" written at 1,040 waited 110 ms
    // (counting the fragment, the "x" written at 1,060: 90 ms). Just before 1,100, "The":
    // the "q" written at 1,020 waited 80 ms.
    expect(p.lagMaxMs).toBe(110);
    // At 1,000 nothing is owed yet; 1,050: "q" (1,020); 1,100: "f" (1,040); 1,150: whole.
    expect(p.lagSamplesMs).toEqual([0, 30, 60, 0]);
  });

  it("is never complete while the last word shows only in part", () => {
    const p = follow(written, shown.slice(0, 3), 2_000, 50);
    expect(p.completeAt).toBeUndefined();
    expect(p.afterLastPieceMs).toBeUndefined();
    // Until 2,000 "fox" never showed whole: its "f" from 1,040.
    expect(p.lagMaxMs).toBe(960);
  });
});
