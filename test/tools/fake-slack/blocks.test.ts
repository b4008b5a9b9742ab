import { describe, expect, it } from "vitest";
import {
  type Block,
  contentError,
  decodeEntities,
  parseBlocks,
  visibleText,
} from "../../../tools/fake-slack/blocks.js";

describe("visibleText", () => {
  it("is the text with mrkdwn entities decoded when there are no blocks", () => {
    expect(visibleText({ text: "a &lt;b&gt; &amp; c" })).toBe("a <b> & c");
  });

  it("decodes each entity once, so an escaped entity stays literal", () => {
    expect(decodeEntities("&amp;lt; is how you write &lt;")).toBe("&lt; is how you write <");
  });

  it("joins the text of markdown, section, header, context and rich_text blocks", () => {
    const blocks: Block[] = [
      { type: "header", text: { type: "plain_text", text: "Title" } },
      { type: "markdown", text: "**bold** &amp; more" },
      { type: "section", text: { type: "mrkdwn", text: "x &gt; y" } },
      { type: "divider" },
      {
        type: "actions",
        elements: [{ type: "button", text: { type: "plain_text", text: "Stop" } }],
      },
      {
        type: "context",
        elements: [
          { type: "mrkdwn", text: "model: max" },
          { type: "image", image_url: "https://x/y.png", alt_text: "logo" },
        ],
      },
      {
        type: "rich_text",
        elements: [
          {
            type: "rich_text_section",
            elements: [
              { type: "text", text: "see " },
              { type: "link", url: "https://a.b", text: "docs" },
              { type: "emoji", name: "wave" },
            ],
          },
          {
            type: "rich_text_list",
            elements: [
              { type: "rich_text_section", elements: [{ type: "text", text: "one" }] },
              { type: "rich_text_section", elements: [{ type: "text", text: "two" }] },
            ],
          },
        ],
      },
    ];
    expect(visibleText({ text: "fallback", blocks })).toBe(
      ["Title", "**bold** & more", "x > y", "model: max", "see docs:wave:", "one\ntwo"].join("\n"),
    );
  });

  it("uses the text when the blocks array is empty", () => {
    expect(visibleText({ text: "plain", blocks: [] })).toBe("plain");
  });
});

describe("parseBlocks", () => {
  it("accepts an array or its JSON string and reports malformed input as Slack does", () => {
    expect(parseBlocks(undefined)).toBeUndefined();
    expect(parseBlocks('[{"type":"divider"}]')).toEqual([{ type: "divider" }]);
    expect(parseBlocks("[{")).toEqual({ error: "invalid_blocks_format" });
    expect(parseBlocks({ type: "divider" })).toEqual({ error: "invalid_blocks_format" });
    expect(parseBlocks([{ text: "no type" }])).toEqual({ error: "invalid_blocks" });
  });
});

describe("contentError", () => {
  it("refuses text over 40,000 characters", () => {
    expect(contentError({ text: "a".repeat(40_000) })).toBeUndefined();
    expect(contentError({ text: "a".repeat(40_001) })).toBe("msg_too_long");
  });

  it("refuses markdown blocks over 12,000 characters in total", () => {
    const md = (n: number): Block => ({ type: "markdown", text: "m".repeat(n) });
    expect(contentError({ text: "", blocks: [md(12_000)] })).toBeUndefined();
    expect(contentError({ text: "", blocks: [md(12_001)] })).toBe("msg_too_long");
    expect(contentError({ text: "", blocks: [md(6_000), md(6_001)] })).toBe("msg_too_long");
  });

  it("refuses more than 50 blocks and section text over 3,000 characters", () => {
    const divider: Block = { type: "divider" };
    expect(contentError({ text: "", blocks: Array(50).fill(divider) })).toBeUndefined();
    expect(contentError({ text: "", blocks: Array(51).fill(divider) })).toBe("invalid_blocks");
    const section = (n: number): Block => ({
      type: "section",
      text: { type: "mrkdwn", text: "s".repeat(n) },
    });
    expect(contentError({ text: "", blocks: [section(3_000)] })).toBeUndefined();
    expect(contentError({ text: "", blocks: [section(3_001)] })).toBe("invalid_blocks");
  });
});
