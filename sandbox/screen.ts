/**
 * The chat's screen: settled entries scroll up for good, the entries still changing (a
 * reply being written) sit in a live area just above the prompt and are redrawn in place,
 * and the person can keep typing at the prompt meanwhile. Without a terminal there is no
 * live area: only settled entries are printed.
 */
import type { Interface as Readline } from "node:readline";
import { clearScreenDown, cursorTo, moveCursor } from "node:readline";
import { stripVTControlCharacters } from "node:util";
import { textWidth } from "./layout.js";

export interface ChatScreen {
  /** Terminal width in cells (80 when unknown). */
  readonly columns: number;
  /** Prints rows above the live area, for good. */
  commit(rows: string[]): void;
  /** Shows these rows in the live area, replacing what it showed. */
  draw(rows: string[]): void;
  /** Readline has just echoed an entered line (and a newline) below the live area. */
  entered(line: string): void;
  /** Clears the live area; nothing is drawn after this. */
  close(): void;
}

export interface TerminalOutput extends NodeJS.WritableStream {
  columns?: number;
  rows?: number;
}

/** A screen on a terminal, sharing it with the readline prompt that sits below the live area. */
export class TerminalScreen implements ChatScreen {
  /** Rows between the top of the live area and the start of the prompt. */
  private liveRows = 0;
  private closed = false;
  private promptGone = false;

  constructor(
    private readonly out: TerminalOutput,
    private readonly rl: Readline,
  ) {
    rl.once("close", () => {
      this.promptGone = true;
    });
  }

  get columns(): number {
    return this.out.columns && this.out.columns > 0 ? this.out.columns : 80;
  }

  commit(rows: string[]): void {
    this.repaint(rows, []);
  }

  draw(rows: string[]): void {
    this.repaint([], this.fit(rows));
  }

  entered(line: string): void {
    // The prompt and the line took these rows; readline then wrote a newline below them.
    const width = textWidth(stripVTControlCharacters(this.rl.getPrompt() + line));
    this.liveRows += Math.floor(width / this.columns) + 1;
  }

  close(): void {
    if (this.closed) return;
    // No prompt after the last paint: the chat is over.
    this.promptGone = true;
    this.repaint([], []);
    this.closed = true;
  }

  /**
   * Keeps the live area within the screen (the cursor cannot move above its top): when a
   * reply is taller, its last rows are shown under a note; all of it is printed once settled.
   */
  private fit(rows: string[]): string[] {
    const room = Math.max(3, (this.out.rows && this.out.rows > 0 ? this.out.rows : 24) - 2);
    if (rows.length <= room) return rows;
    const hidden = rows.length - room + 1;
    return [
      `\x1b[2m… ${hidden} more rows above, shown in full when the answer is complete\x1b[0m`,
    ].concat(rows.slice(hidden));
  }

  private repaint(committed: string[], live: string[]): void {
    if (this.closed) return;
    const cursorRow = this.rl.getCursorPos().rows;
    moveCursor(this.out, 0, -(cursorRow + this.liveRows));
    cursorTo(this.out, 0);
    clearScreenDown(this.out);
    const rows = [...committed, ...live];
    if (rows.length > 0) this.out.write(`${rows.join("\n")}\n`);
    this.liveRows = live.length;
    // readline redraws the prompt from the row its cursor was on: leave that many rows.
    this.out.write("\n".repeat(cursorRow));
    if (!this.promptGone) this.rl.prompt(true);
  }
}

/** Without a terminal: settled entries only, as plain lines. */
export class PlainScreen implements ChatScreen {
  readonly columns = 10_000;

  constructor(private readonly out: NodeJS.WritableStream) {}

  commit(rows: string[]): void {
    if (rows.length > 0) this.out.write(`${rows.join("\n")}\n`);
  }

  draw(): void {}

  entered(): void {}

  close(): void {}
}
