/**
 * Fits the text of the files read for a question into what the assistant may be sent, in
 * order of importance: the question's own files before the thread's, each in the order it
 * was shared, and of a long file its beginning before its end. A file that does not fit whole
 * keeps as many of its first lines as fit (at least `minChars`, else it is left out), and
 * says how much was left out; what was left out is listed for the reply's note.
 */

export interface FileText {
  name: string;
  /** Its type as people know it: "python", "csv", "pdf", … */
  type: string;
  text: string;
}

export interface FittedFiles {
  /** The files as the assistant reads them, each introduced by its name and type. */
  text: string;
  /** Names of files cut short, and of files left out for want of room. */
  cut: string[];
  leftOut: string[];
}

/** A file is kept only with at least this much of it, characters. */
const MIN_CHARS = 200;

export function fitFiles(files: readonly FileText[], budgetChars: number): FittedFiles {
  const parts: string[] = [];
  const cut: string[] = [];
  const leftOut: string[] = [];
  let room = budgetChars;
  for (const file of files) {
    const head = `--- File: ${file.name} (${file.type}) ---\n`;
    const whole = `${head}${file.text.trimEnd()}\n--- End of ${file.name} ---`;
    if (whole.length + 2 <= room) {
      parts.push(whole);
      room -= whole.length + 2;
      continue;
    }
    const tail = (left: number) =>
      `\n[… the rest of ${file.name} (${left.toLocaleString("en-US")} characters) left out: it did not fit …]\n--- End of ${file.name} ---`;
    const space = room - head.length - tail(file.text.length).length - 2;
    if (space < MIN_CHARS) {
      leftOut.push(file.name);
      continue;
    }
    const kept = beginning(file.text, space);
    parts.push(`${head}${kept}${tail(file.text.length - kept.length)}`);
    cut.push(file.name);
    room = 0;
  }
  return { text: parts.join("\n\n"), cut, leftOut };
}

/** The first whole lines of `text` within `chars` (the first `chars` when one line is longer). */
function beginning(text: string, chars: number): string {
  const slice = text.slice(0, chars);
  const lastBreak = slice.lastIndexOf("\n");
  return lastBreak > chars / 2 ? slice.slice(0, lastBreak) : slice;
}
