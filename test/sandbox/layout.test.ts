import { describe, expect, it } from "vitest";
import { layout, sanitize, textWidth, wrapOffsets } from "../../sandbox/layout.js";

const rowsOf = (text: string, width: number) =>
  wrapOffsets(text, width).map(([from, to]) => text.slice(from, to));

describe("wrapOffsets", () => {
  it("breaks after the last space that fits, and mid-word when a word is longer than a row", () => {
    expect(rowsOf("the quick brown fox", 10)).toEqual(["the quick ", "brown fox"]);
    expect(rowsOf("abcdefghijkl", 5)).toEqual(["abcde", "fghij", "kl"]);
    expect(rowsOf("", 5)).toEqual([""]);
  });

  it("drops a space that would overflow a row", () => {
    expect(rowsOf("abcde fgh", 5)).toEqual(["abcde", "fgh"]);
  });

  it("counts wide characters as two cells", () => {
    expect(textWidth("日本語")).toBe(6);
    expect(textWidth("é")).toBe(1);
    expect(rowsOf("日本語です", 4)).toEqual(["日本", "語で", "す"]);
    for (const row of rowsOf("a日本語😀bc", 3)) expect(textWidth(row)).toBeLessThanOrEqual(3);
  });
});

describe("sanitize", () => {
  it("removes escape sequences and control characters, and expands tabs", () => {
    expect(sanitize("a\x1b[2Jb\x07c\td\r")).toBe("a[2Jbc  d");
  });
});

describe("layout", () => {
  it("puts the label on the first row and indents every other row under it", () => {
    const rows = layout(
      [
        {
          label: { text: "you> ", style: "you" },
          lines: [
            [{ text: "one two three four", style: "plain" }],
            [],
            [{ text: "x", style: "plain" }],
          ],
        },
      ],
      15,
      false,
    );
    expect(rows).toEqual(["you> one two ", "     three four", "     ", "     x"]);
    for (const row of rows) expect(textWidth(row)).toBeLessThanOrEqual(15);
  });

  it("styles segments with ANSI only when asked, splitting a styled run across rows", () => {
    const paragraph = {
      label: { text: "> ", style: "assistant" as const },
      lines: [
        [
          { text: "plain ", style: "plain" as const },
          { text: "dim words here", style: "dim" as const },
        ],
      ],
    };
    expect(layout([paragraph], 12, false)).toEqual(["> plain dim ", "  words here"]);
    const colored = layout([paragraph], 12, true);
    expect(colored[0]).toBe("\x1b[1;35m> \x1b[0mplain \x1b[2mdim \x1b[0m");
    expect(colored[1]).toBe("  \x1b[2mwords here\x1b[0m");
  });
});
