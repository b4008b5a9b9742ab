import { describe, expect, it } from "vitest";
import {
  keepsParts,
  splitAnswer,
  splitInterim,
  splitInterimWithRoom,
} from "../../../src/slack/render/answer-split.js";
import { escapeMrkdwn, toPlainFallback } from "../../../src/slack/render/mrkdwn.js";
import { renderInterim } from "../../../src/slack/render/render.js";
import { endsInsideFence, random, sampleMarkdown } from "../markdown-samples.js";
import { checkParts, DEFAULTS, isHigh, isLow, type Limits, optionsOf } from "../split-checks.js";

describe("splitAnswer", () => {
  it("keeps a short answer whole and gives [''] for an empty one", () => {
    expect(splitAnswer("")).toEqual([""]);
    expect(splitAnswer("Hello")).toEqual(["Hello"]);
    const md =
      "## Plan\n\n**Bold**, `code`, [link](https://x.y)\n\n- a\n- b\n\n```ts\nconst a = 1;\n```";
    expect(splitAnswer(md)).toEqual([md]);
  });

  it("prefers a paragraph boundary and drops only the newline at the cut", () => {
    const md = `${"a".repeat(30)}\n\n${"b".repeat(20)}\n${"c".repeat(20)}`;
    const parts = splitAnswer(md, { softLimit: 60, hardLimit: 100 });
    expect(parts).toEqual([`${"a".repeat(30)}\n`, `${"b".repeat(20)}\n${"c".repeat(20)}`]);
    expect(parts.join("\n")).toBe(md);
  });

  it("takes the last line boundary when a paragraph boundary would leave the part too short", () => {
    const md = `aa\n\n${"b".repeat(20)}\n${"c".repeat(20)}\n${"d".repeat(20)}`;
    expect(splitAnswer(md, { softLimit: 60, hardLimit: 100 })[0]).toBe(
      `aa\n\n${"b".repeat(20)}\n${"c".repeat(20)}`,
    );
  });

  it("keeps a heading with its section rather than ending a part with it", () => {
    const md = `${"a".repeat(30)}\n\n## Next\n\n${"b".repeat(40)}`;
    expect(splitAnswer(md, { softLimit: 60, hardLimit: 100 })).toEqual([
      `${"a".repeat(30)}\n`,
      `## Next\n\n${"b".repeat(40)}`,
    ]);
    // Only a heading fits the window: it is still cut there rather than growing the part.
    const alone = `## ${"h".repeat(50)}\n${"c".repeat(50)}`;
    expect(splitAnswer(alone, { softLimit: 60, hardLimit: 100 })).toEqual(alone.split("\n"));
  });

  it("never cuts inside a code block that fits hardLimit, whatever the fence", () => {
    for (const [open, close] of [
      ["```python", "```"],
      ["~~~ sh", "~~~"],
      ["````md", "`````"],
      ["   ```js", "   ```"],
      ["    ```js", "    ```"], // inside a list item under "10. "
      ["> ```", "> ```"],
    ] as const) {
      const code = [
        open,
        ...Array.from({ length: 30 }, (_, i) => `line ${i} ~~~ \`\`\``),
        close,
      ].join("\n");
      const md = `intro\n\n${code}\n\nafter`;
      const parts = splitAnswer(md, { softLimit: 100, hardLimit: 2_000 });
      expect(parts).toEqual(["intro\n", code, "\nafter"].map((p) => p));
      checkParts(md, parts, { soft: 100, hard: 2_000, escaped: 36_000 });
    }
  });

  it("does not take a backtick run with backticks after it for a fence", () => {
    const md = `\`\`\`not a fence\` here\n${"x".repeat(50)}\n${"y".repeat(50)}`;
    expect(splitAnswer(md, { softLimit: 60, hardLimit: 200 })).toHaveLength(3);
  });

  it("cuts a code block longer than hardLimit at line boundaries inside it", () => {
    const code = [
      "```",
      ...Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(40, ".")),
      "```",
    ].join("\n");
    const md = `before\n${code}\nafter`;
    const parts = splitAnswer(md, { softLimit: 500, hardLimit: 1_500 });
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.join("\n")).toBe(md);
    expect(parts[0]).toBe("before");
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(1_500);
    checkParts(md, parts, { soft: 500, hard: 1_500, escaped: 36_000 });
  });

  it("cuts a line longer than hardLimit after a space, or hard but never inside a surrogate pair", () => {
    const words = "word ".repeat(100);
    const parts = splitAnswer(words, { softLimit: 50, hardLimit: 120 });
    expect(parts.join("")).toBe(words);
    for (const part of parts.slice(0, -1)) expect(part.endsWith(" ")).toBe(true);

    const emoji = "😀".repeat(200);
    const hard = splitAnswer(emoji, { softLimit: 51, hardLimit: 101 });
    expect(hard.join("")).toBe(emoji);
    for (const part of hard) {
      expect(part.length).toBeLessThanOrEqual(101);
      expect(Array.from(part).every((ch) => ch === "😀")).toBe(true);
    }
  });

  it("keeps the escaped text of every part within escapedLimit", () => {
    const code = ["```", ...Array.from({ length: 200 }, () => "&".repeat(50)), "```"].join("\n");
    const parts = splitAnswer(code);
    expect(parts.join("\n")).toBe(code);
    for (const part of parts) expect(escapeMrkdwn(part).length).toBeLessThanOrEqual(36_000);
    expect(Math.max(...parts.map((p) => p.length))).toBeGreaterThan(3_800);
  });

  it("does not leave a blank last part when the answer ends with newlines at a cut", () => {
    const md = `${"a".repeat(60)}\n\n`;
    const parts = splitAnswer(md, { softLimit: 60, hardLimit: 200 });
    expect(parts).toEqual([md]);
    const many = `${"a ".repeat(40)}\n${"b ".repeat(29)}b\n`;
    const split = splitAnswer(many, { softLimit: 60, hardLimit: 200 });
    expect(split.join("\n")).toBe(many);
    expect(split.every((p) => p.trim() !== "")).toBe(true);
  });

  it("handles CRLF line ends", () => {
    const md = `${"a".repeat(40)}\r\n\r\n${"b".repeat(40)}\r\n`;
    const parts = splitAnswer(md, { softLimit: 60, hardLimit: 200 });
    expect(parts).toEqual([`${"a".repeat(40)}\r\n\r`, `${"b".repeat(40)}\r\n`]);
  });

  it("rejects limits it cannot honour", () => {
    expect(() => splitAnswer("x", { softLimit: 1 })).toThrow(RangeError);
    expect(() => splitAnswer("x", { softLimit: 100, hardLimit: 50 })).toThrow(RangeError);
    expect(() => splitAnswer("x", { escapedLimit: 5 })).toThrow(RangeError);
  });

  it("splits a 50,000-char answer with many code blocks within every limit", () => {
    let hardCuts = 0;
    for (const seed of [1, 2, 3]) {
      const md = sampleMarkdown(seed, { size: 50_000, maxCodeLines: 120 });
      const parts = splitAnswer(md);
      expect(parts.join("\n")).toBe(md);
      expect(parts.length).toBeGreaterThan(10);
      hardCuts += checkParts(md, parts, DEFAULTS);
    }
    expect(hardCuts).toBe(0);
  });

  it("holds its contract over many generated answers and limits", () => {
    let insideLine = 0;
    for (let seed = 1; seed <= 160; seed++) {
      const rng = random(seed * 7919);
      const soft = 40 + Math.floor(rng() * 400);
      const hard = soft + Math.floor(rng() * 3 * soft);
      const long = seed % 5 === 0;
      const md = sampleMarkdown(seed, {
        size: 500 + Math.floor(rng() * 4_000),
        maxCodeLines: 4 + Math.floor(rng() * 60),
        maxLineLength: long ? hard * 2 : 120,
        crlf: 0.2,
      });
      const limits = { soft, hard, escaped: 36_000 };
      const parts = splitAnswer(md, optionsOf(limits));
      insideLine += checkParts(md, parts, limits);
      const longest = Math.max(...md.split("\n").map((line) => line.length));
      if (longest <= hard) expect(parts.join("\n")).toBe(md);
    }
    expect(insideLine).toBeGreaterThan(0);
  });
});

describe("splitInterim", () => {
  /** Grows `md` by chunks from `chunk()` and checks every interim split against the final one. */
  function grow(md: string, limits: Limits, chunk: () => number): string[] {
    const final = splitAnswer(md, optionsOf(limits));
    let settledBefore = 0;
    for (let at = 0; at < md.length; ) {
      at = Math.min(md.length, at + chunk());
      const parts = splitInterim(md.slice(0, at), optionsOf(limits));
      const settled = parts.length - 1;
      expect(settled).toBeGreaterThanOrEqual(settledBefore);
      settledBefore = settled;
      for (let k = 0; k < settled; k++) expect(parts[k]).toBe(final[k]);
      const last = parts[settled] as string;
      expect(endsInsideFence(last)).toBe(false);
      expect(last.length).toBeLessThanOrEqual(limits.hard + 16);
    }
    expect(settledBefore).toBeLessThanOrEqual(final.length - 1);
    return final;
  }

  it("never changes a settled part while an answer grows char by char", () => {
    const md = sampleMarkdown(11, { size: 4_000, maxCodeLines: 25, maxLineLength: 200 });
    expect(grow(md, { soft: 200, hard: 600, escaped: 36_000 }, () => 1).length).toBeGreaterThan(10);
  });

  it("never changes a settled part while answers grow by chunks, including hard cuts", () => {
    let cutInsideLines = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const rng = random(seed);
      const soft = 60 + Math.floor(rng() * 300);
      const hard = soft + Math.floor(rng() * 2 * soft);
      const md = sampleMarkdown(seed, {
        size: 3_000,
        maxCodeLines: 50,
        maxLineLength: seed % 4 === 0 ? hard * 2 : 120,
      });
      const final = grow(md, { soft, hard, escaped: 36_000 }, () => 1 + Math.floor(rng() * 80));
      if (final.join("\n") !== md) cutInsideLines++;
    }
    expect(cutInsideLines).toBeGreaterThan(0);
    const big = sampleMarkdown(99, { size: 50_000, maxCodeLines: 150 });
    const rng = random(5);
    expect(grow(big, DEFAULTS, () => 1 + Math.floor(rng() * 400)).length).toBeGreaterThan(10);
  });

  it("renders the last part as interim and leaves the rest final", () => {
    const md = `${"a".repeat(50)}\n\n\`\`\`py\nprint(1)`;
    expect(splitInterim(md, { softLimit: 60, hardLimit: 200 })).toEqual([
      `${"a".repeat(50)}\n`,
      "```py\nprint(1)\n```",
    ]);
  });
});

describe("splitInterimWithRoom", () => {
  /**
   * Grows `md` by chunks; after each, the longest text that keepsParts says keeps the parts,
   * and one on the way to it, split into as many, all but the last the same. Returns the
   * share of chunks that kept the parts before them.
   */
  function grow(md: string, limits: Limits, chunk: () => number, rng: () => number): number {
    const options = optionsOf(limits);
    let kept = 0;
    let chunks = 0;
    for (let at = 0; at < md.length; ) {
      const split = splitInterimWithRoom(md.slice(0, at), options);
      expect(split.parts).toEqual(splitInterim(md.slice(0, at), options));
      let longest = at;
      while (longest < md.length && keepsParts(split, md.slice(0, longest + 1))) longest++;
      for (const to of [longest, at + Math.floor(rng() * (longest - at))]) {
        const parts = splitInterim(md.slice(0, to), options);
        expect(parts.length).toBe(split.parts.length);
        expect(parts.slice(0, -1)).toEqual(split.parts.slice(0, -1));
      }
      const next = Math.min(md.length, at + chunk());
      chunks++;
      if (next <= longest) kept++;
      at = next;
    }
    return kept / chunks;
  }

  it("keeps the parts while the text grows within its room, and mostly does", () => {
    for (let seed = 1; seed <= 12; seed++) {
      const rng = random(seed);
      const soft = 60 + Math.floor(rng() * 200);
      const hard = soft + Math.floor(rng() * 2 * soft);
      // Ampersands escape to five units: a small escaped limit binds before softLimit.
      const escaped = seed % 3 === 0 ? 2 * soft : 36_000;
      const md = sampleMarkdown(seed, {
        size: 1_500,
        maxCodeLines: 40,
        maxLineLength: seed % 4 === 0 ? hard * 2 : 120,
      });
      const kept = grow(md, { soft, hard, escaped }, () => 1 + Math.floor(rng() * 12), rng);
      expect(kept).toBeGreaterThan(0.5);
    }
  });

  it("leaves no room past softLimit but for a line being written, none after a blank line", () => {
    const limits = { soft: 60, hard: 200, escaped: 36_000 };
    const code = `\`\`\`\n${"x".repeat(70)}`;
    const inCode = splitInterimWithRoom(code, optionsOf(limits));
    expect(keepsParts(inCode, `${code}yyy`)).toBe(true);
    expect(keepsParts(inCode, `${code}\n`)).toBe(false);
    expect(keepsParts(inCode, `${code}${"y".repeat(200)}`)).toBe(false);
    // The blank line joins the part before it; a word after it begins the next.
    const blank = `${"a ".repeat(40)}\n\n`;
    const joined = splitInterimWithRoom(blank, optionsOf(limits));
    expect(joined.parts).toHaveLength(1);
    expect(keepsParts(joined, `${blank}b`)).toBe(false);
    expect(splitInterim(`${blank}b`, optionsOf(limits))).toHaveLength(2);
  });
});

describe("renderInterim", () => {
  it("closes an open fence with the same fence, indentation and quote markers", () => {
    expect(renderInterim("Here:\n```python\nprint(1)")).toBe("Here:\n```python\nprint(1)\n```");
    expect(renderInterim("~~~sh\nls -la")).toBe("~~~sh\nls -la\n~~~");
    expect(renderInterim("````md\n```js\nx")).toBe("````md\n```js\nx\n````");
    expect(renderInterim("1. Step\n   ```bash\n   npm i")).toBe(
      "1. Step\n   ```bash\n   npm i\n   ```",
    );
    expect(renderInterim("> ```\n> code")).toBe("> ```\n> code\n> ```");
    expect(renderInterim("```\nx\n")).toBe("```\nx\n```");
    expect(renderInterim("```ts")).toBe("```ts\n```");
  });

  it("replaces a half-typed closing fence instead of showing it", () => {
    expect(renderInterim("```py\nx = 1\n``")).toBe("```py\nx = 1\n```");
    expect(renderInterim("~~~~\nx\n~~~")).toBe("~~~~\nx\n~~~~");
  });

  it("leaves closed fences and ordinary Markdown as written", () => {
    const md = "## Title\n\n**bold** and `code`\n\n- [link](https://a.b)\n\n```js\nx\n```";
    expect(renderInterim(md)).toBe(md);
    expect(renderInterim("a ``` b")).toBe("a ``` b");
  });

  it("drops a trailing lone emphasis or backtick run, but never to nothing", () => {
    expect(renderInterim("Hello **")).toBe("Hello ");
    expect(renderInterim("Run `")).toBe("Run ");
    expect(renderInterim("text\n``")).toBe("text\n");
    expect(renderInterim("**bold**")).toBe("**bold**");
    expect(renderInterim("**")).toBe("**");
    expect(renderInterim("")).toBe("");
  });

  it("holds back a mention being written until its `>` arrives, so no markup shows", () => {
    expect(renderInterim("Heads up <!chan")).toBe("Heads up ");
    expect(renderInterim("cc <@U12")).toBe("cc ");
    expect(renderInterim("cc <!subteam^S1|@te")).toBe("cc ");
    expect(renderInterim("Heads up <!channel> now")).toBe("Heads up <!channel> now");
    expect(renderInterim("a < b and <https://x")).toBe("a < b and <https://x");
    expect(renderInterim("<!ch")).toBe("<!ch");
    expect(renderInterim("```\n<!ch")).toBe("```\n<!ch\n```");
  });
});

describe("escapeMrkdwn and toPlainFallback", () => {
  it("escapes &, < and > only", () => {
    expect(escapeMrkdwn("a & b <c> **d** &amp;")).toBe("a &amp; b &lt;c&gt; **d** &amp;amp;");
  });

  it("cuts with an ellipsis within maxLen, never inside an entity or surrogate pair", () => {
    expect(toPlainFallback("a < b", 100)).toBe("a &lt; b");
    const cut = toPlainFallback("ab&cd", 6);
    expect(cut).toBe("ab…");
    for (let max = 0; max < 40; max++) {
      const out = toPlainFallback("x&y<😀>z".repeat(3), max);
      expect(out.length).toBeLessThanOrEqual(max);
      expect(out).not.toMatch(/&(?!amp;|lt;|gt;)/);
      expect(isHigh(out.charCodeAt(out.length - 2)) && !isLow(out.charCodeAt(out.length - 1))).toBe(
        false,
      );
    }
  });
});
