import { describe, expect, it } from "vitest";
import { type Block, contentError, visibleText } from "../../../tools/fake-slack/blocks.js";

const raw = (text: string) => ({ type: "raw_text", text });
const rich = (text: string) => ({
  type: "rich_text",
  elements: [{ type: "rich_text_section", elements: [{ type: "text", text }] }],
});
/** A table block of `rows` rows and `columns` raw_text cells each. */
function table(rows: number, columns: number, extra: Record<string, unknown> = {}): Block {
  return {
    type: "table",
    rows: Array.from({ length: rows }, (_, r) =>
      Array.from({ length: columns }, (_, c) => raw(`${r}.${c}`)),
    ),
    ...extra,
  };
}
const error = (...blocks: Block[]) => contentError({ text: "t", blocks });

describe("the table block", () => {
  it("is accepted within 100 rows of 20 cells and 20 column settings", () => {
    const settings = Array.from({ length: 20 }, () => ({ align: "right", is_wrapped: true }));
    expect(error(table(100, 20, { column_settings: settings }))).toBeUndefined();
    expect(error({ type: "markdown", text: "before" }, table(1, 1))).toBeUndefined();
  });

  it("is refused with invalid_blocks past Slack's limits", () => {
    expect(error(table(101, 2))).toBe("invalid_blocks");
    expect(error(table(2, 21))).toBe("invalid_blocks");
    const settings = Array.from({ length: 21 }, () => ({ align: "left" }));
    expect(error(table(2, 2, { column_settings: settings }))).toBe("invalid_blocks");
  });

  it("is refused when malformed: no rows, an empty row, an unknown cell or alignment", () => {
    expect(error({ type: "table" })).toBe("invalid_blocks");
    expect(error({ type: "table", rows: [] })).toBe("invalid_blocks");
    expect(error({ type: "table", rows: [[]] })).toBe("invalid_blocks");
    expect(error({ type: "table", rows: [[{ type: "mrkdwn", text: "x" }]] })).toBe(
      "invalid_blocks",
    );
    expect(error(table(1, 1, { column_settings: [{ align: "middle" }] }))).toBe("invalid_blocks");
  });

  it("is one to a message", () => {
    expect(error(table(1, 1), { type: "markdown", text: "between" }, table(1, 1))).toBe(
      "invalid_blocks",
    );
  });

  it("shows its cells as visible text, a line a row", () => {
    const blocks: Block[] = [
      { type: "markdown", text: "Prices:" },
      {
        type: "table",
        rows: [
          [raw("Name"), rich("Price")],
          [raw("tea"), rich("3.50")],
        ],
      },
      { type: "context", elements: [{ type: "mrkdwn", text: "Answered by max" }] },
    ];
    expect(visibleText({ text: "fallback", blocks })).toBe(
      "Prices:\nName | Price\ntea | 3.50\nAnswered by max",
    );
  });
});
