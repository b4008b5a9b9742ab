/**
 * Fenced code blocks (``` and ~~~) as CommonMark opens and closes them, read one line at a
 * time. This is all the Markdown structure the renderer needs: a cut between messages must
 * not fall inside a fence, and a half-written answer must have its open fence closed.
 *
 * Deliberately more lenient than CommonMark about indentation: a fence indented by any
 * amount of spaces, tabs or `>` quote markers counts, because assistants nest code blocks in
 * list items (under `10. ` or a nested bullet the fence sits 4+ columns in) and in quotes.
 * The only misread is a literal fence line inside a top-level indented code block, and its
 * cost is merely a part that grows towards the hard limit.
 */

/** An open fenced code block: what closes it and how to write its closing line. */
export interface OpenFence {
  /** The fence character: "`" or "~". */
  readonly char: string;
  /** Length of the opening run; a closing run must be at least as long. */
  readonly length: number;
  /** What precedes the run on the opening line (indentation, `>` markers), reused to close it. */
  readonly prefix: string;
}

const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const QUOTE = 0x3e; // ">"
const BACKTICK = 0x60;
const TILDE = 0x7e;

/** Index of the first character of `text[start, end)` that is not indentation or a quote marker. */
function skipPrefix(text: string, start: number, end: number): number {
  let i = start;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== TAB && c !== QUOTE) break;
    i++;
  }
  return i;
}

function runLength(text: string, start: number, end: number, code: number): number {
  let i = start;
  while (i < end && text.charCodeAt(i) === code) i++;
  return i - start;
}

/** True when `text[start, end)` holds only spaces, tabs and a CR. */
export function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== TAB && c !== CR) return false;
  }
  return true;
}

/** The fence that the line `text[start, end)` opens, if it is an opening fence line. */
export function fenceOpenedBy(text: string, start: number, end: number): OpenFence | undefined {
  const at = skipPrefix(text, start, end);
  const code = text.charCodeAt(at);
  if (code !== BACKTICK && code !== TILDE) return undefined;
  const length = runLength(text, at, end, code);
  if (length < 3) return undefined;
  // CommonMark: a backtick fence's info string may not contain a backtick (that is inline code).
  if (code === BACKTICK && text.slice(at + length, end).includes("`")) return undefined;
  return { char: code === BACKTICK ? "`" : "~", length, prefix: text.slice(start, at) };
}

/** Whether the line `text[start, end)` closes `fence`: a long enough run and nothing after it. */
export function closesFence(text: string, start: number, end: number, fence: OpenFence): boolean {
  const at = skipPrefix(text, start, end);
  const length = runLength(text, at, end, fence.char.charCodeAt(0));
  return length >= fence.length && isBlank(text, at + length, end);
}

/** The fence state after the line `text[start, end)`, given the state before it. */
export function fenceAfterLine(
  text: string,
  start: number,
  end: number,
  open: OpenFence | undefined,
): OpenFence | undefined {
  if (open) return closesFence(text, start, end, open) ? undefined : open;
  return fenceOpenedBy(text, start, end);
}

/** The fence still open at the end of `text` (its last line counts even without a newline). */
export function openFenceAtEnd(text: string): OpenFence | undefined {
  let open: OpenFence | undefined;
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    open = fenceAfterLine(text, start, end, open);
    if (nl === -1) return open;
    start = nl + 1;
  }
}
