import { isWhitespace } from "./answer-layout.js";
import { type OpenFence, openFenceAtEnd } from "./markdown-fences.js";

/** The growing last part of an answer, made safe to show before it is complete. */

const EMPHASIS = new Set(["*", "_", "`", "~"]);
/** Slack markup being written at the end (`<!chan`, `<@U12`): its `>` has not come yet. */
const HALF_MARKUP = /<[!@][^<>\n]*$/;

/**
 * A half-written answer made safe to show: an open code fence is closed (with the same fence,
 * indentation and quote markers, and without a half-typed closing run on the last line), a
 * trailing half-written mention (`<!chan`, `<@U1`) is held back until it is complete (it would
 * show as markup, and once complete it is shown as its words: quiet-mentions.ts), and a
 * trailing lone run of `*`, `_`, backticks or `~` that opens nothing yet is dropped (it would
 * show as stray characters, or turn into a fence on the next update). Anything else is left
 * as written. Never empty for a non-empty input.
 */
export function renderInterim(written: string): string {
  const open = openFenceAtEnd(written);
  if (open) return closeFence(written, open);
  const half = HALF_MARKUP.exec(written);
  const markdownSoFar = half && half.index > 0 ? written.slice(0, half.index) : written;
  let end = markdownSoFar.length;
  while (end > 0 && EMPHASIS.has(markdownSoFar[end - 1] as string)) end--;
  if (end === markdownSoFar.length || end === 0) return markdownSoFar;
  if (!isWhitespace(markdownSoFar.charCodeAt(end - 1))) return markdownSoFar;
  // A run that just closed a fence is no stray run: it is what keeps the block closed.
  const lineStart = markdownSoFar.lastIndexOf("\n") + 1;
  if (/^[ \t>]*(`{3,}|~{3,})$/.test(markdownSoFar.slice(lineStart))) return markdownSoFar;
  return markdownSoFar.slice(0, end);
}

function closeFence(text: string, open: OpenFence): string {
  const fence = open.prefix + open.char.repeat(open.length);
  const lastLine = text.lastIndexOf("\n") + 1;
  let body = text;
  if (lastLine > 0) {
    const line = text.slice(lastLine).replace(/^[ \t>]*/, "");
    const run = line.length - line.replace(/^[`~]+/, "").length;
    // A closing fence being typed (`` of ```): drop it, the appended fence replaces it.
    if (run > 0 && run < open.length && run === line.length && line[0] === open.char) {
      body = text.slice(0, lastLine);
    }
  }
  return body.endsWith("\n") ? body + fence : `${body}\n${fence}`;
}
