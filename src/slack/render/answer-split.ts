import {
  escapedLength,
  firstAbove,
  firstContent,
  lastAtMost,
  layOut,
  type Whole,
} from "./answer-layout.js";
import { findTables } from "./markdown-tables.js";
import { renderInterim } from "./render.js";
import { fitsTableBlock } from "./table-block.js";

/**
 * Turns the assistant's Markdown into the parts that Slack messages show. Pure functions:
 * no Slack calls, no state between calls.
 *
 * Sizes are UTF-16 code units (JS `length`), which never undercounts what Slack counts.
 * A part also feeds the message's `text` fallback after mrkdwn escaping (`&`→`&amp;`,
 * `<`→`&lt;`, `>`→`&gt;`: up to 5 units per character), and Slack truncates `text` past
 * 40,000: a part of 11,000 ampersands would escape to 55,000. So every part is also held to
 * `escapedLimit` measured after escaping.
 */

export interface SplitOptions {
  /** Preferred most a part measures, UTF-16 units; default 3_800 (Slack's ~4,000 safe edit size). */
  softLimit?: number;
  /**
   * Most a part may measure when a code block or a single line forces it past softLimit,
   * UTF-16 units; default 11_000 (a markdown block holds 12,000: the rest is room for the
   * fence that an interim render appends).
   */
  hardLimit?: number;
  /**
   * Most a part may measure once `&<>` are escaped for `text`, UTF-16 units; default 36_000
   * (Slack truncates `text` at 40,000: the rest is room for a status sentence).
   */
  escapedLimit?: number;
}

interface Limits {
  soft: number;
  hard: number;
  escaped: number;
}

function resolveLimits({
  softLimit = 3_800,
  hardLimit = 11_000,
  escapedLimit = 36_000,
}: SplitOptions): Limits {
  if (!Number.isInteger(softLimit) || softLimit < 2) {
    throw new RangeError(`softLimit must be an integer of at least 2, got ${softLimit}`);
  }
  if (!Number.isInteger(hardLimit) || hardLimit < softLimit) {
    throw new RangeError(`hardLimit must be an integer of at least softLimit, got ${hardLimit}`);
  }
  // At least two characters of five escaped units each, so that every part makes progress.
  if (!Number.isInteger(escapedLimit) || escapedLimit < 10) {
    throw new RangeError(`escapedLimit must be an integer of at least 10, got ${escapedLimit}`);
  }
  return { soft: softLimit, hard: hardLimit, escaped: escapedLimit };
}

/**
 * Cuts the whole answer into parts, greedily from the start. Each cut is decided from the
 * text within `hardLimit` after the part's start and the fence state there, never from what
 * comes later: that is what keeps settled parts stable while the answer grows (splitInterim).
 *
 * The rules, for a part starting at `p`:
 * 1. the rest fits softLimit → it is the last part;
 * 2. else the last cut within softLimit: the last paragraph boundary if that fills at least
 *    half the window, else the last line boundary outside code; neither right after a
 *    heading (which belongs with its section) unless nothing else is there;
 * 3. else (a code block or a long line from near `p`) the first cut after softLimit within
 *    hardLimit; else the rest if it fits hardLimit; else the last newline within hardLimit
 *    (inside code: only a code block longer than hardLimit gets here); else, in a single line
 *    longer than hardLimit, after the last space or tab in the window's second half, or hard
 *    at the limit (never between a surrogate pair).
 * Parts always have content (not only whitespace) before a cut, except in the hard cases.
 * A cut at a newline drops it; a cut inside a line drops nothing.
 */
function cutParts(
  text: string,
  limits: Limits,
  wholes: readonly Whole[] = [],
): { parts: string[]; newlineCut: boolean[] } {
  const n = text.length;
  const { newlines, cuts, goodCuts, blankCuts, escExtra } = layOut(text, wholes);
  const escapedSize = (from: number, to: number) =>
    to - from + (escExtra[to] as number) - (escExtra[from] as number);
  const fits = (from: number, to: number, limit: number) =>
    to - from <= limit && escapedSize(from, to) <= limits.escaped;
  /** The furthest end of a part from `from` within `limit` (both measures). */
  const windowEnd = (from: number, limit: number) => {
    let hi = Math.min(n, from + limit);
    if (escapedSize(from, hi) <= limits.escaped) return hi;
    let lo = from;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (escapedSize(from, mid) <= limits.escaped) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };

  const parts: string[] = [];
  const starts: number[] = [];
  const newlineCut: boolean[] = [];
  let p = 0;
  for (;;) {
    starts.push(p);
    if (fits(p, n, limits.soft)) {
      parts.push(text.slice(p));
      break;
    }
    const soft = windowEnd(p, limits.soft);
    const content = firstContent(text, p);
    let at = lastAtMost(goodCuts, soft);
    if (at <= content) at = lastAtMost(cuts, soft);
    if (at > content) {
      const blank = lastAtMost(blankCuts, soft);
      if (blank > content && blank - p >= (soft - p) / 2) at = blank;
    } else {
      const hard = windowEnd(p, limits.hard);
      at = firstAbove(cuts, Math.max(soft, content));
      if (at > hard) {
        if (fits(p, n, limits.hard)) {
          parts.push(text.slice(p));
          break;
        }
        at = lastAtMost(newlines, hard);
        if (at <= p) {
          const q = cutInsideLine(text, p, hard);
          parts.push(text.slice(p, q));
          newlineCut.push(false);
          p = q;
          continue;
        }
      }
    }
    parts.push(text.slice(p, at));
    newlineCut.push(true);
    p = at + 1;
  }

  // A whitespace-only tail (an answer ending in newlines right after a cut) would be a blank
  // message: it joins the part before it. Stable too, as only the last part ever changes.
  const last = parts.length - 1;
  const prevStart = starts[last - 1];
  if (
    prevStart !== undefined &&
    newlineCut[last - 1] === true &&
    firstContent(text, starts[last] as number) === n &&
    fits(prevStart, n, limits.hard)
  ) {
    parts.splice(last - 1, 2, text.slice(prevStart));
    newlineCut.pop();
  }
  return { parts, newlineCut };
}

/** Where to end a part inside a line longer than the window `(p, end]`. */
function cutInsideLine(text: string, p: number, end: number): number {
  for (let i = end - 1; i >= p + Math.floor((end - p) / 2); i--) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09) return i + 1;
  }
  let q = end;
  const high = text.charCodeAt(q - 1);
  const low = text.charCodeAt(q);
  if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) q--;
  return q > p ? q : Math.min(text.length, p + 2);
}

/**
 * The final split of a complete answer into message parts, each within softLimit where the
 * text allows (see SplitOptions). Cuts fall at line boundaries outside fenced code, paragraph
 * boundaries preferred, and drop the newline there, so that
 * `splitAnswer(md).join("\n") === md` exactly. The one exception is a single line longer
 * than hardLimit: it is cut inside the line, and those two parts join with nothing between.
 * An empty answer gives `[""]`. O(n): one pass plus a binary search per part, about half a
 * millisecond for 50,000 chars, so the bridge can call it on every update without a cache.
 */
export function splitAnswer(markdown: string, options: SplitOptions = {}): string[] {
  return cutParts(markdown, resolveLimits(options)).parts;
}

/**
 * The split of a half-written answer. Every part but the last is settled: it equals the part
 * that the final split (and every later interim split) of any continuation makes, because a
 * cut depends only on the text before it and within hardLimit after the part's start, and a
 * part is cut only once text exists beyond its window. The bridge can therefore finalize
 * those messages once. The last part is still growing and is rendered with renderInterim.
 */
export function splitInterim(markdownSoFar: string, options: SplitOptions = {}): string[] {
  return splitInterimWithRoom(markdownSoFar, options).parts;
}

/** An interim split, and how far its text may grow keeping its parts but the last. */
export interface InterimSplit {
  /** The text split. */
  text: string;
  /** splitInterim's parts. */
  parts: string[];
  /** How long the text may grow keeping its parts (keepsParts). */
  keptUpTo: number;
  /** Whether a newline written keeps them too: not once the last part is past softLimit. */
  keptOverLines: boolean;
}

/** splitInterim, with the room its parts have (InterimSplit). */
export function splitInterimWithRoom(
  markdownSoFar: string,
  options: SplitOptions = {},
): InterimSplit {
  const limits = resolveLimits(options);
  const { parts } = cutParts(markdownSoFar, limits);
  const last = parts.length - 1;
  const written = parts[last] as string;
  parts[last] = renderInterim(written);
  // The last part is the text's tail (cutParts).
  const room = roomAfter(markdownSoFar, markdownSoFar.length - written.length, limits);
  return { text: markdownSoFar, parts, ...room };
}

/**
 * Whether `grown`, the split's text with more written after it, splits into as many parts,
 * all but the last as they are. A text written anew instead is not told apart when it is
 * within the room.
 */
export function keepsParts(split: InterimSplit, grown: string): boolean {
  if (grown.length < split.text.length || grown.length > split.keptUpTo) return false;
  return split.keptOverLines || grown.indexOf("\n", split.text.length) === -1;
}

/**
 * The room of the last part, which starts at `start`: cutParts cuts no part that fits
 * softLimit (rule 1), and each written unit adds at most 5 escaped ones. A part past it had no
 * cut within softLimit, nor a line's end after it within hardLimit (rule 3): it is cut once a
 * newline is written or it is past hardLimit. A blank last line may be one that cutParts
 * joined to the part before it, which a word written after it begins anew: no room.
 */
function roomAfter(text: string, start: number, limits: Limits) {
  const n = text.length;
  const escaped = escapedLength(text, start, n);
  const upTo = (limit: number) =>
    Math.min(start + limit, n + Math.floor((limits.escaped - escaped) / 5));
  if (n - start <= limits.soft && escaped <= limits.escaped) {
    return { keptUpTo: upTo(limits.soft), keptOverLines: true };
  }
  const blankLastLine = firstContent(text, text.lastIndexOf("\n") + 1) === n;
  return { keptUpTo: blankLastLine ? n : upTo(limits.hard), keptOverLines: false };
}

/**
 * The final layout's parts: splitAnswer's, each cut again right after every table that a table
 * block can show (table-block.ts), so that such a table ends its message (Slack shows one table
 * a message, at its bottom) and the text after it goes on in the next; the size cuts keep such
 * a table whole where it fits a part (rule 2 of cutParts, as for a heading). The cut drops the
 * newline after the table, so `splitFinal(md).join("\n") === md` as for splitAnswer. A table
 * that stays text cuts nothing. Only the complete answer is laid out so: while it is written,
 * tables are text (splitInterim).
 */
export function splitFinal(markdown: string, options: SplitOptions = {}): string[] {
  // Such a table is held whole where a part can hold it: a cut inside it is no good cut.
  const tables = findTables(markdown).filter(fitsTableBlock);
  return cutParts(markdown, resolveLimits(options), tables).parts.flatMap(cutAfterTables);
}

function cutAfterTables(part: string): string[] {
  const pieces: string[] = [];
  let from = 0;
  for (const table of findTables(part)) {
    if (!fitsTableBlock(table)) continue;
    // A table with only whitespace after it closes the part already.
    if (firstContent(part, table.end) === part.length) break;
    pieces.push(part.slice(from, table.end));
    from = table.end + 1;
  }
  pieces.push(part.slice(from));
  return pieces;
}
