import type { ReplyPhase, ReplyStep } from "../../bridge/ports.js";
import { statusSentence, stopActions } from "../render/reply-blocks.js";
import type { StreamChunk } from "../web-api/web-api.js";

/**
 * The pieces a native stream shows besides the answer's words: a status card while the
 * answer waits or pauses, a task card per step of the run, and the Stop button. No Slack
 * calls here.
 */

/** Slack cuts a task card's title near 256 characters (reported). */
const TITLE_MAX = 256;

/** The id of the status card (a step's card id is prefixed, so the two never meet). */
const STATUS_CARD = "reply-status";

/** What a task card shows; `details` as far as it was sent. */
export interface Card {
  title: string;
  status: ReplyStep["status"];
  details: string;
}

function fitTitle(title: string): string {
  return title.length <= TITLE_MAX ? title : `${title.slice(0, TITLE_MAX - 1)}…`;
}

/**
 * The status card for `phase`: in progress with the status line's words while the reply waits
 * (queued, starting, retrying) or no words flow (`writing` false), complete once they do.
 * `shown`: words of the answer are in the stream.
 */
export function statusCard(phase: ReplyPhase, shown: boolean, writing: boolean): Card {
  const sentence = statusSentence(phase, shown) ?? "Working…";
  const busy = !writing || phase.kind !== "working";
  return {
    title: fitTitle(busy ? sentence : sentence.replace(/…$/, "")),
    status: busy ? "in_progress" : "complete",
    details: "",
  };
}

export function statusChunk(card: Card): StreamChunk {
  return { type: "task_update", id: STATUS_CARD, title: card.title, status: card.status };
}

/**
 * The chunk that brings a step's card up to date, and what the card then shows; undefined
 * when it already shows the step. Slack adds `details` to what a card said (reported), so
 * only what is new is sent when the details grew; other changes are sent whole.
 */
export function stepChunk(
  step: ReplyStep,
  shown: Card | undefined,
): { chunk: StreamChunk; card: Card } | undefined {
  const card: Card = {
    title: fitTitle(step.title),
    status: step.status,
    details: step.details ?? "",
  };
  if (shown && shown.title === card.title && shown.status === card.status) {
    if (shown.details === card.details) return undefined;
  }
  const before = shown?.details ?? "";
  const details = card.details.startsWith(before)
    ? card.details.slice(before.length)
    : card.details;
  const chunk: StreamChunk = {
    type: "task_update",
    id: `step-${step.id}`,
    title: card.title,
    status: card.status,
    ...(details === "" ? {} : { details }),
  };
  return { chunk, card };
}

/** The Stop button, shown in the stream until the final edit replaces the message. */
export function stopChunk(turnId: string): StreamChunk {
  return { type: "blocks", blocks: [stopActions(turnId)] };
}

export function textChunk(text: string): StreamChunk {
  return { type: "markdown_text", text };
}
