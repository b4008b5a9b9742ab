import { describe, expect, it } from "vitest";
import { findTables, splitRow } from "../../../src/slack/render/markdown-tables.js";

const TABLE = [
  "| Name | Qty | Price | Note |",
  "| :--- | :-: | ----: | ---- |",
  "| tea  | 2   | 3.50  | hot  |",
  "| cake | 1   | 4.00  |      |",
].join("\n");

describe("findTables", () => {
  it("finds a table with its header, rows and the delimiter row's alignment", () => {
    const [table, ...more] = findTables(TABLE);
    expect(more).toEqual([]);
    expect(table?.align).toEqual(["left", "center", "right", undefined]);
    expect(table?.rows).toEqual([
      ["Name", "Qty", "Price", "Note"],
      ["tea", "2", "3.50", "hot"],
      ["cake", "1", "4.00", ""],
    ]);
  });

  it("says where the table is, so that the text around it is kept as written", () => {
    const before = "Here are the prices:\n\n";
    const after = "\n\nAsk for more.";
    const text = `${before}${TABLE}${after}`;
    const [table] = findTables(text);
    expect(text.slice(0, table?.start)).toBe(before);
    expect(text.slice(table?.start, table?.end)).toBe(TABLE);
    expect(text.slice(table?.end)).toBe(after);
  });

  it("ends a table at a blank line or a line without a pipe", () => {
    const text = "a | b\n--|--\n1 | 2\nplain words\n3 | 4";
    const tables = findTables(text);
    expect(tables).toHaveLength(1);
    expect(tables[0]?.rows).toEqual([
      ["a", "b"],
      ["1", "2"],
    ]);
    expect(text.slice(tables[0]?.end)).toBe("\nplain words\n3 | 4");
  });

  it("reads escaped pipes as pipes, and pipes inside inline code as the code's", () => {
    const text = "| expr | meaning |\n|---|---|\n| `a || b` | either \\| or |\n| `x\\|y` | z |";
    const [table] = findTables(text);
    expect(table?.rows).toEqual([
      ["expr", "meaning"],
      ["`a || b`", "either | or"],
      ["`x|y`", "z"],
    ]);
  });

  it("finds no table inside fenced code, and finds the one after it", () => {
    const text = ["```md", "| a | b |", "|---|---|", "| 1 | 2 |", "```", "", "| c |", "| - |"].join(
      "\n",
    );
    const tables = findTables(text);
    expect(tables).toHaveLength(1);
    expect(tables[0]?.rows).toEqual([["c"]]);
  });

  it("needs a delimiter row as wide as the header, with a pipe", () => {
    expect(findTables("| a | b |\n|---|\n| 1 | 2 |")).toEqual([]);
    expect(findTables("Title\n---\nmore")).toEqual([]);
    expect(findTables("| a | b |\n| 1 | 2 |")).toEqual([]);
  });

  it("takes no table in a quote", () => {
    expect(findTables("> | a | b |\n> |---|---|\n> | 1 | 2 |")).toEqual([]);
  });

  it("takes no indented code for a table", () => {
    expect(findTables("    | a | b |\n    |---|---|")).toEqual([]);
    expect(findTables("   | a | b |\n   |---|---|")).toHaveLength(1);
  });

  it("widens the table for a row longer than the header, losing none of its cells", () => {
    const [table] = findTables("| a | b |\n|---|--:|\n| 1 | 2 | 3 |\n| 4 |");
    expect(table?.align).toEqual([undefined, "right", undefined]);
    expect(table?.rows).toEqual([
      ["a", "b", ""],
      ["1", "2", "3"],
      ["4", "", ""],
    ]);
  });

  it("finds every table of an answer, in order", () => {
    const text = `${TABLE}\n\nbetween\n\n| x | y |\n|---|---|\n| 1 | 2 |\n`;
    const tables = findTables(text);
    expect(tables.map((t) => t.rows[0]?.[0])).toEqual(["Name", "x"]);
  });
});

describe("splitRow", () => {
  it("takes leading and trailing pipes as optional", () => {
    expect(splitRow("a | b")).toEqual(["a", "b"]);
    expect(splitRow("| a | b |")).toEqual(["a", "b"]);
    expect(splitRow("| a | |")).toEqual(["a", ""]);
    expect(splitRow("| a | b \\|")).toEqual(["a", "b |"]);
  });
});
