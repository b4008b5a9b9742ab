import type { types as Slack } from "@slack/bolt";

/**
 * A table cell's inline Markdown as a rich text cell: code spans, `**bold**`, `*italic*` or
 * `_italic_`, `~~struck~~` and `[links](url)` become styled runs; anything else, an unmatched
 * marker included, is text as written. Conservative on purpose: a marker is read only where it
 * is closed in the same cell, and emphasis only around text that does not begin or end with a
 * space, so that no word of the cell is lost or hidden.
 */

type Style = { bold?: boolean; italic?: boolean; strike?: boolean; code?: boolean };
type Run = Slack.RichTextText | Slack.RichTextLink;

const EMPHASIS: readonly [string, keyof Style][] = [
  ["**", "bold"],
  ["__", "bold"],
  ["~~", "strike"],
  ["*", "italic"],
  ["_", "italic"],
];
/** `[label](url)`, for the web and mail only: Slack refuses a link block to anything else. */
const LINK = /^\[([^\]\n]+)\]\(((?:https?:\/\/|mailto:)[^()\s]+)\)/;

function text(value: string, style: Style): Slack.RichTextText {
  return Object.keys(style).length > 0
    ? { type: "text", text: value, style }
    : { type: "text", text: value };
}

/** The closing `marker` of emphasis opened at `i`, or -1: around content without edge spaces. */
function emphasisEnd(cell: string, i: number, marker: string): number {
  const from = i + marker.length;
  const close = cell.indexOf(marker, from + 1);
  if (close === -1) return -1;
  const inner = cell.slice(from, close);
  if (inner.trim() !== inner || inner.includes("`")) return -1;
  // `_` inside a word (snake_case) is no emphasis.
  if (
    marker[0] === "_" &&
    (/\w/.test(cell[i - 1] ?? "") || /\w/.test(cell[close + marker.length] ?? ""))
  ) {
    return -1;
  }
  return close;
}

/** The runs of `cell` under `style`, each text run merged with the plain text before it. */
function runs(cell: string, style: Style): Run[] {
  const out: Run[] = [];
  let plain = "";
  const flush = () => {
    if (plain !== "") out.push(text(plain, style));
    plain = "";
  };
  for (let i = 0; i < cell.length; ) {
    if (cell[i] === "`") {
      const ticks = /^`+/.exec(cell.slice(i))?.[0] ?? "`";
      const close = cell.indexOf(ticks, i + ticks.length);
      if (close > i + ticks.length) {
        flush();
        out.push(text(cell.slice(i + ticks.length, close), { ...style, code: true }));
        i = close + ticks.length;
        continue;
      }
    }
    const link = cell[i] === "[" ? LINK.exec(cell.slice(i)) : null;
    if (link) {
      flush();
      out.push({ type: "link", url: link[2] as string, text: link[1] as string });
      i += link[0].length;
      continue;
    }
    const emphasis = EMPHASIS.find(([marker]) => cell.startsWith(marker, i));
    const close = emphasis ? emphasisEnd(cell, i, emphasis[0]) : -1;
    if (emphasis && close !== -1) {
      const [marker, key] = emphasis;
      flush();
      out.push(...runs(cell.slice(i + marker.length, close), { ...style, [key]: true }));
      i = close + marker.length;
      continue;
    }
    plain += cell[i];
    i++;
  }
  flush();
  return out;
}

/** One table cell as rich text (an empty cell: a section with no runs). */
export function richCell(cell: string): Slack.RichTextBlock {
  return { type: "rich_text", elements: [{ type: "rich_text_section", elements: runs(cell, {}) }] };
}
