import { type FileText, fitFiles } from "../../files/fit.js";
import { fileName } from "../../files/kinds.js";
import type { ThreadMessage, Withheld } from "../ports.js";

/**
 * The one rule for what a turn passes on to the service besides its question: the people's
 * messages of the Slack thread the assistant has not seen yet. Pure: thread messages in,
 * service message text out.
 *
 * - Unseen: after the point the conversation has passed on (`passedThrough`; the whole
 *   thread before the question when nothing was passed on yet) and before the question.
 * - Never: the bot's own messages, and messages that reach the service as questions of
 *   their own (`questions`), so nothing is sent twice.
 * - Only from people the bot answers: a message whose author the bot does not answer, or
 *   could not check (`withheld`), is counted in a line of its own and never quoted; neither
 *   its author nor its files are named.
 * - Over `budgetChars`, the first of those messages and the most recent ones are kept, and
 *   a line in between says how many were left out.
 * - The text of the files read for the question share that budget, after the messages: the
 *   messages keep at least a quarter of it, or all the files leave; the files fill the rest
 *   in the order given (the question's own first), a long one cut to its beginning.
 * - With nothing unseen and no file the content is the question alone, exactly as the
 *   person wrote it.
 */
export interface ThreadContextInput {
  /** The person's question, already readable and trimmed. */
  question: string;
  /** The asker's display name, which labels the question; undefined when not looked up. */
  askerName: string | undefined;
  /** The thread's messages (any order; they are sorted by ts). */
  messages: readonly ThreadMessage[];
  /** The question's own ts: messages from then on are not context. */
  questionTs: string;
  /** The latest ts the conversation has passed on (exclusive); null: nothing yet. */
  passedThrough: string | null;
  /** ts of messages that reach the service as questions of their own. */
  questions: ReadonlySet<string>;
  /**
   * Most characters the earlier messages may take, marker line included; 0 passes none. The
   * line counting withheld messages is outside it (it is short, and quotes nothing).
   */
  budgetChars: number;
  /** The text of the files read for the question, most important first; default none. */
  files?: readonly FileText[];
}

export interface ThreadContext {
  /** The text to post to the service. */
  content: string;
  /** How many earlier messages the content carries. */
  included: number;
  /** How many unseen messages the budget left out. */
  leftOut: number;
  /** How many unseen messages were withheld, by why: their authors are not answered. */
  withheld: Record<Withheld, number>;
  /** Names of files cut to their beginning, and of files left out, for want of room. */
  filesCut: string[];
  filesLeftOut: string[];
}

/**
 * Separates the thread's messages from the question. Every message line starts with its
 * author's name or an indent, so the bare rule cannot be mistaken for part of one.
 */
export const QUESTION_RULE = "---";

/** Compares two Slack ts values ("1700000000.000100") exactly, as numbers. */
export function compareTs(a: string, b: string): number {
  const [aSec = "0", aFrac = ""] = a.split(".");
  const [bSec = "0", bFrac = ""] = b.split(".");
  if (aSec.length !== bSec.length) return aSec.length - bSec.length;
  if (aSec !== bSec) return aSec < bSec ? -1 : 1;
  const af = aFrac.padEnd(6, "0");
  const bf = bFrac.padEnd(6, "0");
  return af === bf ? 0 : af < bf ? -1 : 1;
}

/**
 * The messages of the thread the assistant has not seen, oldest first: withheld ones
 * included (they are counted, not quoted: see `composeThreadContext`).
 */
export function unseenMessages(
  input: Pick<ThreadContextInput, "messages" | "questionTs" | "passedThrough" | "questions">,
): ThreadMessage[] {
  const { questionTs, passedThrough, questions } = input;
  return input.messages
    .filter(
      (m) =>
        !m.bySelf &&
        !questions.has(m.ts) &&
        compareTs(m.ts, questionTs) < 0 &&
        (passedThrough === null || compareTs(m.ts, passedThrough) > 0) &&
        (m.withheld !== undefined || m.text.trim() !== "" || m.files.length > 0),
    )
    .sort((a, b) => compareTs(a.ts, b.ts));
}

/** One message as a line (continuation lines indented, so each message starts a line). */
export function renderMessage(message: ThreadMessage): string {
  const text = message.text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .trim();
  const files = message.files.map((file) => `[file: ${fileName(file)}]`).join(" ");
  const body = [text, files].filter((part) => part !== "").join(text.includes("\n") ? "\n" : " ");
  return `${message.author}: ${body.replace(/\n/g, "\n  ")}`;
}

const leftOutLine = (count: number) => `[… ${count} message${count === 1 ? "" : "s"} left out …]`;

/** The line counting withheld messages: how many, and why; never whose. */
export function withheldLine(reason: Withheld, count: number): string {
  const messages = `${count} message${count === 1 ? "" : "s"}`;
  return reason === "refused"
    ? `[… ${messages} from ${count === 1 ? "someone" : "people"} the bot does not answer left out …]`
    : `[… ${messages} left out: the bot could not check who wrote ${count === 1 ? "it" : "them"} …]`;
}

/** Cuts a rendered message to `max` characters, saying so. */
function cut(line: string, max: number): string {
  if (line.length <= max) return line;
  const mark = " […]";
  return `${line.slice(0, Math.max(0, max - mark.length)).trimEnd()}${mark}`;
}

/**
 * The earlier messages as lines within `budget` characters (newlines between lines
 * counted): all of them when they fit; otherwise the first (cut to a quarter of the budget),
 * a left-out line, and as many of the most recent as fit (each cut to half the budget).
 */
export function fitToBudget(
  messages: readonly ThreadMessage[],
  budget: number,
): { lines: string[]; included: number; leftOut: number } {
  if (budget <= 0 || messages.length === 0) {
    return { lines: [], included: 0, leftOut: messages.length };
  }
  const rendered = messages.map(renderMessage);
  const size = (lines: string[]) => lines.reduce((n, l) => n + l.length, 0) + lines.length - 1;
  if (size(rendered) <= budget) {
    return { lines: rendered, included: rendered.length, leftOut: 0 };
  }
  const first = cut(rendered[0] as string, Math.floor(budget / 4));
  const marker = leftOutLine(rendered.length);
  let room = budget - first.length - 1 - marker.length - 1;
  const recent: string[] = [];
  for (let i = rendered.length - 1; i >= 1; i--) {
    const line = cut(rendered[i] as string, Math.floor(budget / 2));
    if (line.length + (recent.length > 0 ? 1 : 0) > room) break;
    room -= line.length + (recent.length > 0 ? 1 : 0);
    recent.unshift(line);
  }
  const leftOut = rendered.length - 1 - recent.length;
  const lines = leftOut > 0 ? [first, leftOutLine(leftOut), ...recent] : [first, ...recent];
  // Only a budget too small for even one cut message gets here: pass none rather than more.
  if (size(lines) > budget) return { lines: [], included: 0, leftOut: messages.length };
  return { lines, included: 1 + recent.length, leftOut };
}

/** The service message for a turn: the unseen thread, its files, then the question, clearly apart. */
export function composeThreadContext(input: ThreadContextInput): ThreadContext {
  const withheld: Record<Withheld, number> = { refused: 0, unchecked: 0 };
  const files = input.files ?? [];
  const budget = Math.max(0, input.budgetChars);
  const unseen = budget > 0 ? unseenMessages(input) : [];
  const passable: ThreadMessage[] = [];
  for (const m of unseen) {
    if (m.withheld === undefined) passable.push(m);
    else withheld[m.withheld] += 1;
  }
  const fitted = fitToBudget(passable, messagesBudget(budget, files));
  const { included, leftOut } = fitted;
  const lines = [...fitted.lines];
  for (const reason of ["refused", "unchecked"] as const) {
    if (withheld[reason] > 0) lines.push(withheldLine(reason, withheld[reason]));
  }
  const used = fitted.lines.reduce((n, line) => n + line.length + 1, 0);
  const shared = fitFiles(files, budget - used);
  const filesCut = shared.cut;
  const filesLeftOut = shared.leftOut;
  const parts: string[] = [];
  if (lines.length > 0) {
    const heading =
      input.passedThrough === null
        ? "Earlier messages in this Slack thread, oldest first:"
        : "Messages written in this Slack thread since the last question, oldest first:";
    parts.push(heading, "", ...lines, "");
  }
  if (shared.text !== "") parts.push(FILES_HEADING, "", shared.text, "");
  if (parts.length === 0) {
    return { content: input.question, included, leftOut, withheld, filesCut, filesLeftOut };
  }
  const content = [
    ...parts,
    QUESTION_RULE,
    "",
    input.askerName === undefined ? "Question:" : `Question from ${input.askerName}:`,
    input.question,
  ].join("\n");
  return { content, included, leftOut, withheld, filesCut, filesLeftOut };
}

const FILES_HEADING =
  "Files shared with the question and in this thread, the question's own first:";

/**
 * How much of the budget the thread's messages may take: all of it without files; with
 * files, what the whole files leave, but never less than a quarter.
 */
function messagesBudget(budget: number, files: readonly FileText[]): number {
  if (files.length === 0) return budget;
  const whole = files.reduce((n, f) => n + f.text.length + 2 * f.name.length + 60, 0);
  return Math.min(budget, Math.max(Math.floor(budget / 4), budget - whole));
}
