import type { types as Slack } from "@slack/bolt";
import { describe, expect, it } from "vitest";
import { splitAnswer, splitFinal } from "../../../src/slack/render/answer-split.js";
import { buildReply } from "../../../src/slack/render/reply-blocks.js";
import { closingTable, tableBlock } from "../../../src/slack/render/table-block.js";

/** A Markdown table of `columns` columns and `rows` body rows. */
function table(columns: number, rows: number, align = "---"): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const names = Array.from({ length: columns }, (_, c) => `h${c}`);
  return [
    line(names),
    line(names.map(() => align)),
    ...Array.from({ length: rows }, (_, r) => line(names.map((_, c) => `r${r}c${c}`))),
  ].join("\n");
}

/** The text of a rich_text cell (a section of text runs, as tableBlock makes it). */
function cellText(cell: Slack.RichTextBlock | Slack.RawTextElement | Slack.RawNumberElement) {
  if (cell.type !== "rich_text") return "";
  return JSON.stringify(cell.elements)
    .match(/"text":"[^"]*"/g)
    ?.map((pair) => JSON.parse(`{${pair}}`).text as string)
    .join("");
}

const final = (body: string) =>
  buildReply({ body, phase: { kind: "continued" }, turnId: "t1", tables: true });

describe("tableBlock", () => {
  it("keeps the header as the first row, every cell's text, and the alignment", () => {
    const found = closingTable("| a | b | c |\n|:--|:-:|--:|\n| 1 | x \\| y | `p|q` |");
    const block = tableBlock(found as NonNullable<typeof found>);
    expect(block.rows.map((row) => row.map(cellText))).toEqual([
      ["a", "b", "c"],
      // The code span's text, shown as code (table-cell.ts).
      ["1", "x | y", "p|q"],
    ]);
    expect(block.column_settings).toEqual([
      { align: "left" },
      { align: "center" },
      { align: "right" },
    ]);
  });

  it("sets no column settings when the delimiter row gives no alignment", () => {
    const found = closingTable(table(2, 1));
    expect(tableBlock(found as NonNullable<typeof found>).column_settings).toBeUndefined();
  });
});

describe("closingTable", () => {
  it("is a table that ends the text, within Slack's 100 rows and 20 columns", () => {
    expect(closingTable(`Intro\n\n${table(20, 99)}\n\n`)).toBeDefined();
    expect(closingTable(`${table(2, 2)}\n\nthen more`)).toBeUndefined();
    // 100 body rows and the header: 101 rows.
    expect(closingTable(table(2, 100))).toBeUndefined();
    expect(closingTable(table(21, 2))).toBeUndefined();
  });
});

describe("buildReply in the final layout", () => {
  it("shows the Markdown before a table in a markdown block, the table in a table block under it", () => {
    const body = `Prices:\n\n${table(2, 2, ":-:")}`;
    const payload = final(body);
    expect(payload.blocks.map((b) => b.type)).toEqual(["markdown", "table"]);
    expect(payload.blocks[0]).toEqual({ type: "markdown", text: "Prices:" });
    const block = payload.blocks[1] as Slack.TableBlock;
    expect(block.rows).toHaveLength(3);
    expect(block.column_settings).toEqual([{ align: "center" }, { align: "center" }]);
    // The notification text keeps the whole part.
    expect(payload.text).toContain("| r1c0 | r1c1 |");
  });

  it("keeps the footer under the table", () => {
    const payload = buildReply({
      body: table(2, 1),
      phase: { kind: "completed", modelUsed: "max" },
      turnId: "t1",
      tables: true,
    });
    expect(payload.blocks.map((b) => b.type)).toEqual(["table", "context", "context_actions"]);
  });

  it("leaves a table over Slack's limits as Markdown text", () => {
    for (const body of [table(21, 3), table(3, 100)]) {
      const payload = final(body);
      expect(payload.blocks[0]).toEqual({ type: "markdown", text: body });
      expect(payload.blocks.some((b) => b.type === "table")).toBe(false);
    }
  });

  it("shows tables as text while the answer is written", () => {
    const payload = buildReply({
      body: `Prices:\n\n${table(2, 2)}`,
      phase: { kind: "working" },
      turnId: "t1",
    });
    expect(payload.blocks.some((b) => b.type === "table")).toBe(false);
  });
});

describe("splitFinal", () => {
  it("ends a message after each table a block shows, the text going on in the next", () => {
    const answer = `Intro\n\n${table(2, 2)}\n\nBetween\n\n${table(3, 1)}\n\nOutro`;
    const parts = splitFinal(answer);
    expect(parts).toEqual([`Intro\n\n${table(2, 2)}`, `\nBetween\n\n${table(3, 1)}`, "\nOutro"]);
    expect(parts.join("\n")).toBe(answer);
    expect(parts.map((p) => final(p).blocks.filter((b) => b.type === "table").length)).toEqual([
      1, 1, 0,
    ]);
  });

  it("cuts nothing for a table that stays text (too wide), and one table a message", () => {
    const wide = table(21, 2);
    const answer = `Intro\n\n${wide}\n\nBetween\n\n${table(2, 2)}\n\nOutro`;
    const parts = splitFinal(answer);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toContain(wide);
    expect(parts.join("\n")).toBe(answer);
    const first = final(parts[0] as string);
    expect(first.blocks.map((b) => b.type)).toEqual(["markdown", "table"]);
    expect((first.blocks[0] as Slack.MarkdownBlock).text).toContain(wide);
  });

  it("cuts nothing after a table that ends the answer, nor at a table in fenced code", () => {
    const fenced = `\`\`\`\n${table(2, 1)}\n\`\`\`\n\nafter`;
    expect(splitFinal(fenced)).toEqual([fenced]);
    const closing = `Intro\n\n${table(2, 1)}\n`;
    expect(splitFinal(closing)).toEqual([closing]);
  });

  it("keeps a table whole where a message can hold it, rather than cut it at the size limit", () => {
    const intro = Array.from({ length: 6 }, (_, i) => `Line ${i} of the intro.`).join("\n");
    const answer = `${intro}\n${table(2, 8)}\nThe end.`;
    const limits = { softLimit: 200, hardLimit: 1_000 };
    // The size split alone cuts inside the table.
    const [first] = splitAnswer(answer, limits);
    expect(first).toContain("| h0 | h1 |");
    expect(first).not.toContain("r7c0");
    const parts = splitFinal(answer, limits);
    expect(parts).toEqual([intro, table(2, 8), "The end."]);
    expect(parts.join("\n")).toBe(answer);
  });

  it("gives every message of an answer with many tables at most one table block", () => {
    const answer = Array.from({ length: 5 }, (_, i) => `Table ${i}\n\n${table(2, 2)}`).join("\n\n");
    const parts = splitFinal(answer);
    expect(parts).toHaveLength(5);
    expect(parts.join("\n")).toBe(answer);
    for (const part of parts) {
      expect(final(part).blocks.filter((b) => b.type === "table")).toHaveLength(1);
    }
  });
});
