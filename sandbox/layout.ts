/**
 * Lays styled text out in terminal rows: word-wrapped to the terminal's width, with a label
 * ("you> ", "assistant> ") on the first row and a hanging indent after it. Wrapping is done
 * here rather than by the terminal so the number of rows on screen is known exactly, which
 * is what redrawing a live reply in place depends on.
 */

export type Style = "plain" | "dim" | "bold" | "error" | "you" | "assistant" | "hint";

export interface Segment {
  text: string;
  style: Style;
}

/** One chat entry: a label, then lines of content (each a run of styled segments). */
export interface Paragraph {
  label: Segment;
  lines: Segment[][];
}

const ANSI: Record<Style, string> = {
  plain: "",
  dim: "\x1b[2m",
  bold: "\x1b[1m",
  error: "\x1b[31m",
  you: "\x1b[1;36m",
  assistant: "\x1b[1;35m",
  hint: "\x1b[7m",
};
const RESET = "\x1b[0m";

/** Removes control characters (escape sequences included) that would upset the screen. */
export function sanitize(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "\t") out += "  ";
    else if (code >= 0x20 && (code < 0x7f || code > 0x9f)) out += char;
  }
  return out;
}

/** Terminal cells one code point takes: 2 for wide (CJK, emoji), 0 for combining marks. */
export function charWidth(codePoint: number): number {
  if (
    (codePoint >= 0x0300 && codePoint <= 0x036f) ||
    (codePoint >= 0x200b && codePoint <= 0x200f) ||
    (codePoint >= 0xfe00 && codePoint <= 0xfe0f)
  ) {
    return 0;
  }
  if (
    (codePoint >= 0x1100 && codePoint <= 0x115f) ||
    (codePoint >= 0x231a && codePoint <= 0x231b) ||
    (codePoint >= 0x23e9 && codePoint <= 0x23f3) ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x1f300 && codePoint <= 0x1faff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

export function textWidth(text: string): number {
  let width = 0;
  for (const char of text) width += charWidth(char.codePointAt(0) ?? 0);
  return width;
}

/**
 * Where rows of `text` start and end (UTF-16 offsets) when wrapped to `width` cells: at the
 * last space that fits, else mid-word. A space that would overflow a row is dropped.
 */
export function wrapOffsets(text: string, width: number): [number, number][] {
  const rows: [number, number][] = [];
  const room = Math.max(1, width);
  let start = 0;
  let col = 0;
  let afterSpace = -1;
  let i = 0;
  for (const char of text) {
    const w = charWidth(char.codePointAt(0) ?? 0);
    if (col + w > room && i > start) {
      if (char === " ") {
        rows.push([start, i]);
        start = i + 1;
        col = 0;
        afterSpace = -1;
        i += char.length;
        continue;
      }
      const cut = afterSpace > start ? afterSpace : i;
      rows.push([start, cut]);
      start = cut;
      col = textWidth(text.slice(start, i));
      afterSpace = -1;
    }
    col += w;
    i += char.length;
    if (char === " ") afterSpace = i;
  }
  rows.push([start, text.length]);
  return rows;
}

function paint(segment: Segment, color: boolean): string {
  const code = ANSI[segment.style];
  return color && code !== "" && segment.text !== ""
    ? `${code}${segment.text}${RESET}`
    : segment.text;
}

/** The part of a run of segments between two offsets of its plain text. */
function slice(segments: Segment[], from: number, to: number): Segment[] {
  const out: Segment[] = [];
  let at = 0;
  for (const segment of segments) {
    const end = at + segment.text.length;
    const a = Math.max(from, at);
    const b = Math.min(to, end);
    if (b > a) out.push({ text: segment.text.slice(a - at, b - at), style: segment.style });
    at = end;
  }
  return out;
}

/** The rows on screen for these paragraphs at `columns` wide, ANSI-styled when `color`. */
export function layout(paragraphs: Paragraph[], columns: number, color: boolean): string[] {
  const rows: string[] = [];
  for (const paragraph of paragraphs) {
    const label = { ...paragraph.label, text: sanitize(paragraph.label.text) };
    const indent = textWidth(label.text);
    const lines = paragraph.lines.length > 0 ? paragraph.lines : [[]];
    let first = true;
    for (const raw of lines) {
      const line = raw.map((s) => ({ ...s, text: sanitize(s.text) }));
      const plain = line.map((s) => s.text).join("");
      for (const [from, to] of wrapOffsets(plain, columns - indent)) {
        const lead = first ? paint(label, color) : " ".repeat(indent);
        first = false;
        rows.push(
          lead +
            slice(line, from, to)
              .map((s) => paint(s, color))
              .join(""),
        );
      }
    }
  }
  return rows;
}
