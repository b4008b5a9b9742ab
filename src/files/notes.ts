import type { UnreadFile } from "./reader.js";

/**
 * What the reply says, under the answer, of the files that did not reach the assistant whole:
 * one line for those it could not read (each with why), one for a file cut to its beginning,
 * one for files left out for want of room. Long lists name the first few and count the rest.
 */

/** Files named in one line at most; the rest are counted. */
const NAMED = 5;

export function fileNotes(
  unread: readonly UnreadFile[],
  cut: readonly string[],
  leftOut: readonly string[],
): string[] {
  const notes: string[] = [];
  if (unread.length > 0) {
    const named = unread.slice(0, NAMED).map((file) => `${file.name} (${file.why})`);
    notes.push(`Not passed on to the assistant: ${list(named, unread.length)}.`);
  }
  if (cut.length > 0) {
    notes.push(
      `Only the beginning of ${list(cut.slice(0, NAMED), cut.length)} reached the assistant: ${cut.length === 1 ? "the whole file" : "they"} did not fit.`,
    );
  }
  if (leftOut.length > 0) {
    notes.push(
      `Left out for want of room in what the assistant is sent: ${list(leftOut.slice(0, NAMED), leftOut.length)}.`,
    );
  }
  return notes;
}

/** "a; b; c", then "and 3 more" when `total` is more than those named. */
function list(named: readonly string[], total: number): string {
  const more = total - named.length;
  return more > 0 ? `${named.join("; ")}; and ${more} more` : named.join("; ");
}
