import type { types as Slack } from "@slack/bolt";
import type { ReplyPhase as BridgeReplyPhase, ReplyStep } from "../../bridge/ports.js";
import { type MessageMark, replyMark } from "../web-api/message-mark.js";
import { feedbackFor } from "./feedback-block.js";
import { toPlainFallback } from "./mrkdwn.js";
import { quietMarkdown } from "./quiet-mentions.js";
import { closingTable, tableBlock } from "./table-block.js";

/**
 * Builds the payload of one reply message: the answer's Markdown in a `markdown` block (in the
 * final layout, a table that ends it in a `table` block under it), a small status line, while
 * the run goes on a Stop button, and under a completed answer the feedback buttons. No Slack
 * calls here.
 */

/** What a reply shows besides its text; `continued` is a finished earlier part of a long answer. */
export type ReplyPhase = BridgeReplyPhase | { kind: "continued" };

/** Ready for `chat.postMessage` / `chat.update`. */
export interface ReplyPayload {
  text: string;
  blocks: Slack.KnownBlock[];
  /** The turn and part index, invisible, by which the message is found again. */
  metadata: MessageMark;
}

export interface ReplyInput {
  /** The (interim or final) Markdown of this message's part. */
  body: string;
  phase: ReplyPhase;
  /** The turn the message answers: the Stop button's value, and the feedback buttons'. */
  turnId: string;
  /** Extra lines shown small under the answer, e.g. a file that could not be read. */
  notes?: string[];
  /**
   * The run's steps so far: while it works, the status line names the latest one in
   * progress instead of "Working…"; an ended reply shows none.
   */
  steps?: readonly ReplyStep[] | undefined;
  /**
   * Which message of a long answer this is (0-based; default 0, the placeholder), and how
   * many there are when known.
   */
  part?: { index: number; total?: number };
  /**
   * The final layout: a Markdown table that ends the body (and fits Slack's limits) is shown as
   * a `table` block (table-block.ts); default false, every table is text, as while an answer
   * is being written.
   */
  tables?: boolean;
}

/** The Stop button's `action_id`; the interactivity listener matches on it. */
export const STOP_ACTION_ID = "stop_run";

// Slack's limits (slack-facts.md, Sizes; Block Kit reference).
const MARKDOWN_MAX = 12_000;
const MRKDWN_TEXT_MAX = 3_000;
const TEXT_MAX = 40_000;

/** A Slack user id: only such a value is written as a `<@…>` mention. */
const USER_ID = /^[UW][A-Z0-9]{2,}$/;

interface Status {
  /** The mrkdwn line shown, escaped, at most MRKDWN_TEXT_MAX. */
  line: string;
  /** The same for the `text` fallback, without the emoji. */
  sentence: string;
  /** An error is shown in a section (full size), anything else in a small context block. */
  block: "context" | "section";
  /** The run is still going: the message carries the Stop button. */
  stoppable: boolean;
  /** The `text` fallback ends with the sentence even when there is a body. */
  endsText: boolean;
}

/** Room kept in a status line for its emoji and part label. */
const LINE_RESERVE = 64;

/** `prefix` + escaped `detail` + `suffix`, the detail cut with "…" to fit a status line. */
function fitLine(prefix: string, detail: string, suffix = ""): string {
  const room = MRKDWN_TEXT_MAX - LINE_RESERVE - prefix.length - suffix.length;
  return prefix + toPlainFallback(detail, room) + suffix;
}

function progress(emoji: string, sentence: string): Status {
  return {
    line: `${emoji} ${sentence}`,
    sentence,
    block: "context",
    stoppable: true,
    endsText: false,
  };
}

function ending(emoji: string, sentence: string, block: Status["block"]): Status {
  return { line: `${emoji} ${sentence}`, sentence, block, stoppable: false, endsText: true };
}

/** The two queues a turn waits in are told apart: its own thread's, and the service's. */
function queuedLine(ahead: number, where: "thread" | "service"): string {
  if (ahead <= 0) return "Queued — next in line";
  return where === "thread"
    ? `Queued — ${ahead} ahead in this thread`
    : `Queued — ${ahead} ahead at the assistant service`;
}

/** A step's title as a status line's sentence: "Searching the docs…". */
const STEP_TITLE_MAX = 200;
function stepSentence(step: ReplyStep): string {
  const title = toPlainFallback(step.title.trim(), STEP_TITLE_MAX);
  return /[.…!?:]$/u.test(title) ? title : `${title}…`;
}

/** What the assistant is doing now: the step begun last of those still in progress. */
function currentStep(steps: readonly ReplyStep[]): ReplyStep | undefined {
  return steps.findLast((step) => step.status === "in_progress" && step.title.trim() !== "");
}

function statusOf(
  phase: ReplyPhase,
  hasBody: boolean,
  steps: readonly ReplyStep[],
): Status | undefined {
  switch (phase.kind) {
    case "queued":
      return progress(":hourglass_flowing_sand:", queuedLine(phase.ahead, phase.where));
    case "starting":
      return progress(":hourglass_flowing_sand:", "Starting…");
    case "working": {
      const step = currentStep(steps);
      if (step) return progress(":gear:", stepSentence(step));
      return hasBody
        ? progress(":writing_hand:", "Writing…")
        : progress(":hourglass_flowing_sand:", "Working…");
    }
    case "retrying": {
      const note = phase.note.trim() || "The assistant service is not answering; still trying…";
      return progress(":warning:", fitLine("", note));
    }
    case "completed": {
      const model = phase.modelUsed?.trim();
      if (hasBody) {
        if (!model) return undefined;
        const line = fitLine("Answered by ", model);
        return { line, sentence: line, block: "context", stoppable: false, endsText: false };
      }
      const words = "The assistant finished without writing an answer.";
      const line = model ? fitLine(`${words} (`, model, ")") : words;
      return { line, sentence: line, block: "context", stoppable: false, endsText: false };
    }
    case "failed":
      return ending(
        ":x:",
        fitLine("The run failed: ", phase.error.trim() || "no reason was given."),
        "section",
      );
    case "stopped": {
      const by = phase.by?.trim();
      if (!by) return ending(":black_square_for_stop:", "Stopped.", "context");
      const who = USER_ID.test(by) ? `<@${by}>` : toPlainFallback(by, 100);
      return ending(":black_square_for_stop:", `Stopped by ${who}.`, "context");
    }
    case "unreachable": {
      const message = phase.message.trim() || "The assistant service could not be reached.";
      return ending(":warning:", fitLine("", message), "section");
    }
    case "continued":
      return undefined;
  }
}

function partLabel(part: ReplyInput["part"]): string {
  if (!part || part.index < 1) return "";
  return part.total !== undefined && part.total > part.index
    ? ` · part ${part.index + 1} of ${part.total}`
    : ` · part ${part.index + 1}`;
}

/** Cuts Markdown that is over the block's size (the splitter keeps parts far below it). */
function fitMarkdown(body: string): string {
  if (body.length <= MARKDOWN_MAX) return body;
  let end = MARKDOWN_MAX - 1;
  const high = body.charCodeAt(end - 1);
  if (high >= 0xd800 && high <= 0xdbff) end--;
  return `${body.slice(0, end)}…`;
}

const mrkdwn = (text: string): Slack.MrkdwnElement => ({ type: "mrkdwn", text });

/** The Stop button of a reply still being written: it stops `turnId`. */
export function stopActions(turnId: string): Slack.ActionsBlock {
  return {
    type: "actions",
    elements: [
      {
        type: "button",
        action_id: STOP_ACTION_ID,
        text: { type: "plain_text", text: "Stop" },
        style: "danger",
        value: turnId,
      },
    ],
  };
}

/** What the status line says of `phase` in words ("Working…"), or undefined when it says nothing. */
export function statusSentence(
  phase: ReplyPhase,
  hasBody: boolean,
  steps: readonly ReplyStep[] = [],
): string | undefined {
  return statusOf(phase, hasBody, steps)?.sentence;
}

/** The payload of one reply message for the given part body and phase, within Slack's limits. */
export function buildReply(input: ReplyInput): ReplyPayload {
  const { body, turnId, part } = input;
  const hasBody = body.trim() !== "";
  const { status, blocks } = footer(input, hasBody);
  if (hasBody) blocks.unshift(...answerBlocks(body, input.tables === true));
  return {
    text: fallbackText(body, hasBody, status),
    blocks,
    metadata: replyMark(turnId, part?.index ?? 0),
  };
}

/** The body as blocks: its Markdown, then (in the final layout) the table that closes it. */
function answerBlocks(body: string, tables: boolean): Slack.KnownBlock[] {
  const table = tables ? closingTable(body) : undefined;
  if (!table) return [{ type: "markdown", text: fitMarkdown(body) }];
  const before = body.slice(0, table.start).trimEnd();
  const blocks: Slack.KnownBlock[] = [];
  if (before.trim() !== "") blocks.push({ type: "markdown", text: fitMarkdown(before) });
  blocks.push(tableBlock(table));
  return blocks;
}

/**
 * The blocks under an answer whose text a stream shows (what `chat.stopStream` puts below
 * it): the status line, the model, the notes, the feedback buttons. No Stop button: the
 * stream has ended.
 */
export function blocksUnderStream(input: Omit<ReplyInput, "body">): Slack.KnownBlock[] {
  return footer({ ...input, body: "" }, true).blocks.filter((block) => block.type !== "actions");
}

/** Everything of a reply message but its text: the status line, model, notes, buttons. */
function footer(
  input: ReplyInput,
  hasBody: boolean,
): { status: Status | undefined; blocks: Slack.KnownBlock[] } {
  const { phase, turnId, notes = [], part, steps = [] } = input;
  const status = statusOf(phase, hasBody, steps);
  const blocks: Slack.KnownBlock[] = [];
  if (status) {
    const label = partLabel(part);
    const shown = status.line + label;
    blocks.push(
      status.block === "section"
        ? { type: "section", text: mrkdwn(shown) }
        : { type: "context", elements: [mrkdwn(shown)] },
    );
  }
  // Every finished reply says which model answered: completed ones in their status line,
  // failed and stopped ones (whose status says what happened) on a small line of their own.
  const model = (phase.kind === "failed" || phase.kind === "stopped") && phase.modelUsed?.trim();
  if (model) blocks.push({ type: "context", elements: [mrkdwn(fitLine("Model: ", model))] });
  const noteLines = notes.map((note) => note.trim()).filter((note) => note !== "");
  if (phase.kind !== "continued" && noteLines.length > 0) {
    blocks.push({
      type: "context",
      elements: [mrkdwn(toPlainFallback(noteLines.join("\n"), MRKDWN_TEXT_MAX))],
    });
  }
  // A continued part is not the end of the answer: the buttons go once, on its last message.
  const feedback = feedbackFor(phase, turnId);
  if (feedback) blocks.push(feedback);
  if (status?.stoppable) blocks.push(stopActions(turnId));
  return { status, blocks };
}

/**
 * The `text` fallback: the escaped body (the status sentence when there is none), followed by
 * the sentence when the run failed, stopped or was unreachable. Never empty.
 */
function fallbackText(markdown: string, hasBody: boolean, status: Status | undefined): string {
  if (!hasBody) return status?.sentence || "…";
  // A notification reads as the block does: "@channel", not the markup escaped.
  const body = quietMarkdown(markdown);
  if (!status?.endsText) return toPlainFallback(body, TEXT_MAX);
  return `${toPlainFallback(body, TEXT_MAX - status.sentence.length - 2)}\n\n${status.sentence}`;
}

/** The Markdown shown by a payload's markdown block ("" when it has none), for tests and checks. */
export function visibleBody(payload: ReplyPayload): string {
  const block = payload.blocks.find((b): b is Slack.MarkdownBlock => b.type === "markdown");
  return block?.text ?? "";
}
