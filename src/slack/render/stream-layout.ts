import { isWhitespace } from "./answer-layout.js";
import { fenceAfterLine, fenceOpenedBy, type OpenFence } from "./markdown-fences.js";

/**
 * How a growing answer is cut into streamed messages: what may be appended to the open
 * stream now, and where its message ends so that the next one begins. Pure functions.
 *
 * A stream only grows, so nothing may be sent that a later cut would have to take back: a
 * message grows freely up to `softLimit`, then ends at the first line that ends outside a
 * code block, and a code block (or a single line) that would take it past `hardLimit` is cut
 * at a line inside it, closed there and reopened at the start of the next message. Past
 * `softLimit` inside code, lines go whole, so that cut never splits a line already sent. The final
 * layout is not this one: the final edits split the complete answer (answer-split.ts).
 */

export interface StreamLimits {
  /** A message grows freely up to this many characters, then ends at a line outside code; default 3_800. */
  softLimit: number;
  /**
   * No message grows past this many characters, decorations included; default 11_000 (Slack
   * holds 12,000 characters of Markdown in a streamed message).
   */
  hardLimit: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { softLimit: 3_800, hardLimit: 11_000 };

/** The answer's text in one streamed message. */
export interface StreamPart {
  /** Where its text begins in the answer. */
  start: number;
  /** What it shows before that text: the opening line of the code block it continues, or "". */
  reopen: string;
  /** Characters of the answer appended so far. */
  sent: number;
}

/** What to append now. */
export interface TextStep {
  /** Markdown to append ("" for nothing), a closing fence included when the message ends in code. */
  append: string;
  /** The part's `sent` once it is appended. */
  sent: number;
  /** Set when the message ends with this append: where the next one begins. */
  next?: { start: number; reopen: string };
}

/** Room kept below `hardLimit` for the fence that closes a message cut inside code. */
const CLOSE_ROOM = 100;
/** The word being written waits only up to this length: a longer run (a link) is cut in it. */
const WORD_MAX = 40;

/**
 * Where the text that may be appended now ends, at or after `from`: what is still being
 * written waits. A `<` not yet closed on the last line waits: Slack markup split over two
 * appends would escape the mention quieting that each append passes through. While the text
 * grows (`holdTail`), its last word waits too, with any whitespace after it: a person reads
 * whole words, not a fragment that changes a moment later; and a chunk that begins with
 * whitespace may lose it (reported), while one that begins with a word cannot. A run without
 * whitespace longer than WORD_MAX (a link, a long line of code) holds back only its last
 * character. Once the text pauses, it goes.
 */
export function streamableEnd(answer: string, from: number, holdTail = true): number {
  let end = answer.length;
  const lt = answer.lastIndexOf("<");
  if (lt >= from && !answer.includes(">", lt) && !answer.includes("\n", lt)) end = lt;
  if (!holdTail) return end;
  while (end > from && isWhitespace(answer.charCodeAt(end - 1))) end--;
  let word = end;
  while (word > from && !isWhitespace(answer.charCodeAt(word - 1))) word--;
  const startsWord = word === 0 || isWhitespace(answer.charCodeAt(word - 1));
  if (startsWord && end - word <= WORD_MAX) return word;
  if (end === from) return from;
  const low = answer.charCodeAt(end - 1);
  // A character outside the basic plane is two code units: both wait.
  const width = low >= 0xdc00 && low <= 0xdfff && end - 2 >= from ? 2 : 1;
  return end - width;
}

/** The code block open at each line end of a part, read from its start. */
interface FenceReader {
  open: OpenFence | undefined;
  /** The opening line of `open`, as written. */
  openLine: string;
}

function readerAt(part: StreamPart): FenceReader {
  const line = part.reopen.replace(/\n$/, "");
  return { open: fenceOpenedBy(line, 0, line.length), openLine: line };
}

function readLine(answer: string, start: number, end: number, reader: FenceReader): void {
  const wasOpen = reader.open !== undefined;
  reader.open = fenceAfterLine(answer, start, end, reader.open);
  if (!wasOpen && reader.open) reader.openLine = answer.slice(start, end);
}

/** The decorations of a cut at `at`: the fence that closes this message and reopens the next. */
function cutAt(answer: string, at: number, reader: FenceReader): { close: string; reopen: string } {
  const { open } = reader;
  if (!open) return { close: "", reopen: "" };
  const fence = open.prefix + open.char.repeat(open.length);
  const close = answer[at - 1] === "\n" ? fence : `\n${fence}`;
  return { close, reopen: `${reader.openLine}\n` };
}

/** Where a cut forced inside a long code block or line goes: after a line, else a space. */
function forcedCut(answer: string, from: number, hardAt: number): number {
  const nl = answer.lastIndexOf("\n", hardAt - 1);
  if (nl !== -1 && nl + 1 >= from) return nl + 1;
  for (let i = hardAt - 1; i > from + (hardAt - from) / 2; i--) {
    if (isWhitespace(answer.charCodeAt(i))) return i + 1;
  }
  const high = answer.charCodeAt(hardAt - 1);
  return Math.max(from, high >= 0xd800 && high <= 0xdbff ? hardAt - 1 : hardAt);
}

/** What to append to `part` from the answer written so far (`holdTail`: see streamableEnd). */
export function nextText(
  answer: string,
  part: StreamPart,
  limits: StreamLimits,
  holdTail = true,
): TextStep {
  const from = part.start + part.sent;
  const end = Math.max(from, streamableEnd(answer, from, holdTail));
  const softAt = part.start + Math.max(0, limits.softLimit - part.reopen.length);
  const hardAt = part.start + limits.hardLimit - CLOSE_ROOM - part.reopen.length;
  const reader = readerAt(part);
  let line = part.start;
  while (line < end) {
    const nl = answer.indexOf("\n", line);
    if (nl === -1 || nl >= end || nl + 1 > hardAt) break;
    readLine(answer, line, nl, reader);
    line = nl + 1;
    // Past the soft limit the message ends at the first line that ends outside code.
    if (line > from && line >= softAt && !reader.open) {
      return {
        append: answer.slice(from, line),
        sent: line - part.start,
        next: { start: line, reopen: "" },
      };
    }
  }
  if (end <= hardAt) {
    // Past the soft limit inside code, a line goes only once it is whole: the cut that the
    // hard limit may force then falls between two lines, never inside one already sent.
    const upTo = reader.open && line >= softAt && line >= from ? line : end;
    return { append: answer.slice(from, upTo), sent: upTo - part.start };
  }
  const at = forcedCut(answer, from, hardAt);
  const cut = cutAt(answer, at, fenceAt(answer, part, at));
  return {
    append: answer.slice(from, at) + cut.close,
    sent: at - part.start,
    next: { start: at, reopen: cut.reopen },
  };
}

/** The fences of `part` read up to `at` (a line start, or inside a line). */
function fenceAt(answer: string, part: StreamPart, at: number): FenceReader {
  const reader = readerAt(part);
  for (let line = part.start; line < at; ) {
    const nl = answer.indexOf("\n", line);
    if (nl === -1 || nl >= at) break;
    readLine(answer, line, nl, reader);
    line = nl + 1;
  }
  return reader;
}

/**
 * Where the next message begins when this one can take no more (Slack ended its stream, or
 * refused its size) at what it holds: the same place, reopening a code block it was in.
 */
export function continuation(answer: string, part: StreamPart): { start: number; reopen: string } {
  const at = part.start + part.sent;
  return { start: at, reopen: cutAt(answer, at, fenceAt(answer, part, at)).reopen };
}
