import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";

/** A text no file holds by chance: `tag`, then random hex words up to `length` characters. */
export function distinctiveText(tag: string, length: number): string {
  let text = `${tag} `;
  while (text.length < length) text += `${randomBytes(6).toString("hex")} `;
  return text.slice(0, length);
}

/** Pieces this long, one every PIECE characters of a text: any of them found is a leak. */
const PIECE = 32;

/** Whether the file's bytes hold any 32-character piece of `text` (UTF-8), wherever it lies. */
export function fileHolds(path: string, text: string): boolean {
  if (!existsSync(path)) return false;
  const bytes = readFileSync(path);
  for (let at = 0; at + PIECE <= text.length; at += PIECE) {
    if (bytes.includes(text.slice(at, at + PIECE))) return true;
  }
  return false;
}

/** Which of the SQLite file and its -wal hold a piece of any of `texts` (by file name). */
export function sqliteFilesHolding(dbPath: string, texts: readonly string[]): string[] {
  return [dbPath, `${dbPath}-wal`]
    .filter((path) => texts.some((text) => fileHolds(path, text)))
    .map((path) => path.slice(path.lastIndexOf("/") + 1));
}
