import { describe, expect, it } from "vitest";
import { richCell } from "../../../src/slack/render/table-cell.js";

/** The runs of a cell, as [text, styles] pairs (a link as "text->url"). */
function runs(cell: string): [string, string][] {
  const [section] = richCell(cell).elements;
  const elements = section && "elements" in section ? section.elements : [];
  return elements.map((e) => {
    if (e.type === "link") return [`${e.text}->${e.url}`, ""];
    const style = "style" in e && e.style ? Object.keys(e.style).sort().join(",") : "";
    return ["text" in e ? (e.text as string) : "", style];
  });
}

describe("richCell", () => {
  it("is the cell as one text run when it holds no inline Markdown", () => {
    expect(runs("3.50 € a piece")).toEqual([["3.50 € a piece", ""]]);
    expect(runs("")).toEqual([]);
  });

  it("styles code spans, bold, italics and struck text, and makes links", () => {
    expect(runs("run `npm ci` **now**, *or* _later_ ~~never~~ [docs](https://x.io/a)")).toEqual([
      ["run ", ""],
      ["npm ci", "code"],
      [" ", ""],
      ["now", "bold"],
      [", ", ""],
      ["or", "italic"],
      [" ", ""],
      ["later", "italic"],
      [" ", ""],
      ["never", "strike"],
      [" ", ""],
      ["docs->https://x.io/a", ""],
    ]);
  });

  it("keeps code as written inside, emphasis markers and pipes included", () => {
    expect(runs("`a **b** | c`")).toEqual([["a **b** | c", "code"]]);
    expect(runs("``a ` b``")).toEqual([["a ` b", "code"]]);
  });

  it("nests emphasis, and keeps every word where markers crowd", () => {
    expect(runs("**bold _and italic_**")).toEqual([
      ["bold ", "bold"],
      ["and italic", "bold,italic"],
    ]);
    const crowded = runs("**bold *and italic***")
      .map(([t]) => t)
      .join("");
    expect(crowded.replace(/\*/g, "")).toBe("bold and italic");
  });

  it("leaves unmatched or spaced markers, and underscores inside words, as text", () => {
    expect(runs("2 * 3 * 4")).toEqual([["2 * 3 * 4", ""]]);
    expect(runs("snake_case_name")).toEqual([["snake_case_name", ""]]);
    expect(runs("**open")).toEqual([["**open", ""]]);
    expect(runs("a ` b")).toEqual([["a ` b", ""]]);
    expect(runs("[not a link] (x)")).toEqual([["[not a link] (x)", ""]]);
    expect(runs("[run](javascript:x)")).toEqual([["[run](javascript:x)", ""]]);
  });
});
