import { fenceAfterLine, isBlank, type OpenFence } from "./markdown-fences.js";

/** Where an answer may be cut into parts, read in one pass; and searching those places. */

/** Where a part may end: found once per call in one pass over the text. */
export interface Layout {
  /** Every newline. */
  readonly newlines: number[];
  /** Newlines that end a line outside fenced code: the places a part may end. */
  readonly cuts: number[];
  /** Cuts that would not leave a heading at the end of a part (its section follows it). */
  readonly goodCuts: number[];
  /** Good cuts that end a blank line: paragraph boundaries, the preferred places. */
  readonly blankCuts: number[];
  /** `escExtra[i]`: units that escaping adds to `text[0, i)`. */
  readonly escExtra: Int32Array;
}

/** An ATX heading line (`## Title`), which belongs with what follows it. */
function isHeading(text: string, start: number, end: number): boolean {
  let i = start;
  while (i < end && i - start < 3 && text.charCodeAt(i) === 0x20) i++;
  const hashes = i;
  while (i < end && text.charCodeAt(i) === 0x23) i++;
  const level = i - hashes;
  return level >= 1 && level <= 6 && (i === end || isWhitespace(text.charCodeAt(i)));
}

/** A stretch of the text, `[start, end)`, that a part should hold whole where it can. */
export interface Whole {
  readonly start: number;
  readonly end: number;
}

/**
 * Reads `text` once. A newline inside one of `wholes` (sorted, apart: the tables a table block
 * shows, in the final split) is a cut but not a good one, as is a newline right after a heading.
 */
export function layOut(text: string, wholes: readonly Whole[] = []): Layout {
  const newlines: number[] = [];
  const cuts: number[] = [];
  const goodCuts: number[] = [];
  const blankCuts: number[] = [];
  let open: OpenFence | undefined;
  let afterHeading = false;
  let whole = 0;
  for (let start = 0; ; ) {
    const nl = text.indexOf("\n", start);
    if (nl === -1) break;
    const wasOpen = open !== undefined;
    open = fenceAfterLine(text, start, nl, open);
    newlines.push(nl);
    while (whole < wholes.length && (wholes[whole] as Whole).end <= nl) whole++;
    const inWhole = whole < wholes.length && (wholes[whole] as Whole).start <= nl;
    if (!open) {
      cuts.push(nl);
      const blank = isBlank(text, start, nl);
      if (!blank) afterHeading = !wasOpen && isHeading(text, start, nl);
      if (!afterHeading && !inWhole) {
        goodCuts.push(nl);
        if (blank) blankCuts.push(nl);
      }
    }
    start = nl + 1;
  }
  const escExtra = new Int32Array(text.length + 1);
  let extra = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x26) extra += 4;
    else if (c === 0x3c || c === 0x3e) extra += 3;
    escExtra[i + 1] = extra;
  }
  return { newlines, cuts, goodCuts, blankCuts, escExtra };
}

/** The length of `text[from, to)` once `&<>` are escaped for mrkdwn, as `escExtra` counts it. */
export function escapedLength(text: string, from: number, to: number): number {
  let length = to - from;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x26) length += 4;
    else if (c === 0x3c || c === 0x3e) length += 3;
  }
  return length;
}

/** Index of the first element of a sorted array that is above `x` (its length if none). */
function upperBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The last element of a sorted array that is at most `x`, or -1. */
export function lastAtMost(sorted: readonly number[], x: number): number {
  const i = upperBound(sorted, x);
  return i === 0 ? -1 : (sorted[i - 1] as number);
}

/** The first element of a sorted array that is above `x`, or Infinity. */
export function firstAbove(sorted: readonly number[], x: number): number {
  return sorted[upperBound(sorted, x)] ?? Number.POSITIVE_INFINITY;
}

export function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** Index of the first character from `from` that is not whitespace, or `text.length`. */
export function firstContent(text: string, from: number): number {
  let i = from;
  while (i < text.length && isWhitespace(text.charCodeAt(i))) i++;
  return i;
}
