import { fenceAfterLine, type OpenFence } from "./markdown-fences.js";

/**
 * GitHub-style Markdown tables (a header row, a delimiter row such as `| :--- | ---: |`, body
 * rows), found in one pass over an answer. The parser only says where each table is and what
 * its cells hold: the text around a table is the caller's, unchanged.
 *
 * Kept narrower than GFM where a wider reading could hide words: a table's lines start with at
 * most three spaces (deeper ones may be code), a table ends at the first line without a pipe
 * (GFM would make it a row of one cell), a row longer than the header widens the table instead
 * of losing its last cells, and a pipe inside inline code does not end a cell (GFM splits there;
 * an answer that writes `a|b` in code means the code). A table in a fenced code block, or in a
 * quote, is no table.
 */

export type ColumnAlign = "left" | "center" | "right";

export interface MarkdownTable {
  /** Index of the header row's first character in the text. */
  start: number;
  /** Index just after the last row (its newline, if any, is not part of the table). */
  end: number;
  /** One entry per column: the delimiter row's alignment, undefined where it gives none. */
  align: (ColumnAlign | undefined)[];
  /** The header row first, then the body rows; every row as wide as the table. */
  rows: string[][];
}

const PIPE = 0x7c;
const BACKSLASH = 0x5c;
const BACKTICK = 0x60;
const DELIMITER_CELL = /^:?-+:?$/;

/** The line `text[start, end)` without the indentation a table may have, or undefined. */
function tableLine(text: string, start: number, end: number): string | undefined {
  let i = start;
  while (i < end && i - start < 4 && text.charCodeAt(i) === 0x20) i++;
  if (i - start > 3) return undefined;
  const line = text.slice(i, end).replace(/\r$/, "");
  return hasPipe(line) ? line : undefined;
}

/** Whether `line` holds a pipe that is not escaped (a pipe in code counts: it marks a row). */
function hasPipe(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === PIPE) return true;
  }
  return false;
}

/** Length of the run of backticks at `i`. */
function ticksAt(line: string, i: number): number {
  let n = 0;
  while (line.charCodeAt(i + n) === BACKTICK) n++;
  return n;
}

/** Where the code span opened by `ticks` backticks at `i` closes (index after it), or -1. */
function codeSpanEnd(line: string, i: number, ticks: number): number {
  for (let j = i + ticks; j < line.length; ) {
    const run = ticksAt(line, j);
    if (run === 0) j++;
    else if (run === ticks) return j + run;
    else j += run;
  }
  return -1;
}

/**
 * The cells of a row, trimmed, `\|` read as `|`. A leading and a trailing pipe are optional;
 * a pipe inside inline code does not split.
 */
export function splitRow(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  const trimmed = line.trim();
  const unclosed = new Map<number, number>();
  let i = trimmed.charCodeAt(0) === PIPE ? 1 : 0;
  for (; i < trimmed.length; ) {
    const c = trimmed.charCodeAt(i);
    if (c === BACKSLASH && trimmed.charCodeAt(i + 1) === PIPE) {
      cell += "|";
      i += 2;
    } else if (c === BACKTICK) {
      const ticks = ticksAt(trimmed, i);
      // A run with no closer after `i` has none after any later place: each length is looked
      // for to the line's end at most once, so that a line of stray backticks stays linear.
      const close = i >= (unclosed.get(ticks) ?? Infinity) ? -1 : codeSpanEnd(trimmed, i, ticks);
      if (close === -1 && !unclosed.has(ticks)) unclosed.set(ticks, i);
      const to = close === -1 ? i + ticks : close;
      cell += trimmed.slice(i, to).replace(/\\\|/g, "|");
      i = to;
    } else if (c === PIPE) {
      cells.push(cell.trim());
      cell = "";
      i++;
    } else {
      cell += trimmed[i];
      i++;
    }
  }
  // A trailing pipe closes the last cell; without one, what follows the last pipe is a cell.
  if (cell.trim() !== "" || !trimmed.endsWith("|") || trimmed.endsWith("\\|")) {
    cells.push(cell.trim());
  }
  return cells;
}

/** The alignments of a delimiter row, or undefined when `line` is not one. */
function delimiterRow(line: string): (ColumnAlign | undefined)[] | undefined {
  if (!/^[\s|:-]+$/.test(line)) return undefined;
  const cells = splitRow(line);
  if (cells.length === 0 || !cells.every((cell) => DELIMITER_CELL.test(cell))) return undefined;
  return cells.map((cell) => {
    const left = cell.startsWith(":");
    const right = cell.endsWith(":");
    if (left && right) return "center";
    if (right) return "right";
    return left ? "left" : undefined;
  });
}

/** Lines of `text` as [start, end) pairs, ends excluding the newline. */
function lines(text: string): [number, number][] {
  const out: [number, number][] = [];
  for (let start = 0; ; ) {
    const nl = text.indexOf("\n", start);
    out.push([start, nl === -1 ? text.length : nl]);
    if (nl === -1) return out;
    start = nl + 1;
  }
}

/** A table of these rows: every row, and the alignments, padded to the widest row. */
function squared(
  start: number,
  end: number,
  align: (ColumnAlign | undefined)[],
  rows: string[][],
): MarkdownTable {
  const width = Math.max(align.length, ...rows.map((row) => row.length));
  return {
    start,
    end,
    align: [...align, ...Array<undefined>(width - align.length).fill(undefined)],
    rows: rows.map((row) => [...row, ...Array<string>(width - row.length).fill("")]),
  };
}

/** The tables of `markdown`, in order, outside fenced code. */
export function findTables(markdown: string): MarkdownTable[] {
  const all = lines(markdown);
  const tables: MarkdownTable[] = [];
  let open: OpenFence | undefined;
  for (let i = 0; i < all.length; i++) {
    const [start, end] = all[i] as [number, number];
    const wasOpen = open !== undefined;
    open = fenceAfterLine(markdown, start, end, open);
    if (wasOpen || open) continue;
    const header = tableLine(markdown, start, end);
    const next = all[i + 1];
    if (header === undefined || next === undefined) continue;
    const delimiter = tableLine(markdown, next[0], next[1]);
    const align = delimiter === undefined ? undefined : delimiterRow(delimiter);
    const head = splitRow(header);
    if (!align || align.length !== head.length) continue;
    const rows = [head];
    let last = i + 1;
    for (let j = i + 2; j < all.length; j++) {
      const [rowStart, rowEnd] = all[j] as [number, number];
      const row = tableLine(markdown, rowStart, rowEnd);
      if (row === undefined) break;
      rows.push(splitRow(row));
      last = j;
    }
    tables.push(squared(start, (all[last] as [number, number])[1], align, rows));
    i = last;
  }
  return tables;
}
