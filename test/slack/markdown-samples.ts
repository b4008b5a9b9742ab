/**
 * Seeded generators of assistant-like Markdown for the renderer's property tests, and an
 * independent reading of fenced code (written separately from src/slack/render/markdown-fences.ts,
 * with regular expressions) to check the splitter against.
 */

/** mulberry32: small, fast, and the same sequence for the same seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
const pick = <T>(rng: Rng, items: readonly T[]): T => items[int(rng, 0, items.length - 1)] as T;

const WORDS = [
  "the",
  "run",
  "answer",
  "Slack",
  "thread",
  "**bold**",
  "_italic_",
  "`code`",
  "a & b",
  "x < y",
  "y > z",
  "[docs](https://example.com/a?b=1&c=2)",
  "café",
  "naïve",
  "😀",
  "𝒳",
  "ok",
  "—",
  "*",
  "~~old~~",
  "<@U123>",
];

function words(rng: Rng, length: number): string {
  let out = pick(rng, WORDS);
  while (out.length < length) out += ` ${pick(rng, WORDS)}`;
  return out;
}

export interface SampleOptions {
  /** Rough size of the document, chars. */
  size: number;
  /** Most lines a code block has; large values make blocks longer than the limits. */
  maxCodeLines?: number;
  /** Longest prose line, chars; above hardLimit it forces cuts inside a line. */
  maxLineLength?: number;
  /** Chance that the document uses CRLF line ends. */
  crlf?: number;
}

function codeBlock(rng: Rng, maxLines: number, indent: string): string[] {
  const char = rng() < 0.7 ? "`" : "~";
  const length = int(rng, 3, 5);
  const fence = char.repeat(length);
  const info = pick(rng, ["", "python", "ts", "bash", " js ", "md title=x"]);
  const lines = [`${indent}${fence}${info}`];
  const count = int(rng, 1, maxLines);
  for (let i = 0; i < count; i++) {
    const roll = rng();
    if (roll < 0.05)
      lines.push(`${indent}${char.repeat(length - 1)}`); // too short to close
    else if (roll < 0.1)
      lines.push(`${indent}${char === "`" ? "~~~" : "```"}`); // other char
    else if (roll < 0.14) lines.push("");
    else if (roll < 0.17) lines.push(`${indent}${fence} not a close`);
    else lines.push(`${indent}${"  ".repeat(int(rng, 0, 3))}${words(rng, int(rng, 5, 70))}`);
  }
  if (rng() < 0.97)
    lines.push(`${indent}${char.repeat(length + int(rng, 0, 2))}${rng() < 0.2 ? "  " : ""}`);
  return lines;
}

/** A document of headings, paragraphs, lists and fenced code blocks. */
export function sampleMarkdown(seed: number, options: SampleOptions): string {
  const rng = random(seed);
  const { size, maxCodeLines = 40, maxLineLength = 160, crlf = 0 } = options;
  const lines: string[] = [];
  let length = 0;
  while (length < size) {
    const roll = rng();
    const block: string[] = [];
    if (roll < 0.12) block.push(`${"#".repeat(int(rng, 1, 3))} ${words(rng, int(rng, 5, 40))}`);
    else if (roll < 0.4) {
      const count = int(rng, 1, 4);
      for (let i = 0; i < count; i++) block.push(words(rng, int(rng, 1, maxLineLength)));
    } else if (roll < 0.6) {
      const count = int(rng, 1, 6);
      for (let i = 0; i < count; i++) {
        block.push(`${rng() < 0.5 ? "-" : `${i + 1}.`} ${words(rng, int(rng, 5, 90))}`);
        if (rng() < 0.15) block.push(...codeBlock(rng, 6, "   "));
      }
    } else if (roll < 0.95) block.push(...codeBlock(rng, maxCodeLines, ""));
    else block.push(`> ${words(rng, 40)}`, "> ```", `> ${words(rng, 30)}`, "> ```");
    const gap = rng() < 0.85 ? Array(int(rng, 1, 2)).fill("") : [];
    lines.push(...block, ...gap);
    length += block.join("\n").length + gap.length + 1;
  }
  const text = lines.join("\n");
  return rng() < crlf ? text.replaceAll("\n", "\r\n") : text;
}

/**
 * For each line of `text`, whether a fenced code block is open after it: the test's own
 * reading, for checking the splitter.
 */
export function fenceStates(text: string): boolean[] {
  const result: boolean[] = [];
  let open: { char: string; length: number } | undefined;
  for (const line of text.split("\n")) {
    if (open) {
      const close = /^[ \t>]*(`+|~+)[ \t\r]*$/.exec(line);
      if (close?.[1]?.[0] === open.char && close[1].length >= open.length) open = undefined;
    } else {
      const start = /^[ \t>]*(`{3,}|~{3,})([\s\S]*)$/.exec(line);
      const run = start?.[1];
      if (run && !(run[0] === "`" && start[2]?.includes("`"))) {
        open = { char: run[0] as string, length: run.length };
      }
    }
    result.push(open !== undefined);
  }
  return result;
}

/** Whether `text` on its own leaves a fenced code block open at its end. */
export function endsInsideFence(text: string): boolean {
  return fenceStates(text).at(-1) === true;
}
