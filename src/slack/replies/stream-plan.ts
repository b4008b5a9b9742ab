import type { ReplyView } from "../../bridge/ports.js";
import {
  nextText,
  type StreamLimits,
  type StreamPart,
  type TextStep,
} from "../render/stream-layout.js";
import type { StreamChunk } from "../web-api/web-api.js";
import {
  type Card,
  statusCard,
  statusChunk,
  stepChunk,
  stopChunk,
  textChunk,
} from "./stream-chunks.js";

/**
 * What one call of a native stream sends (a start or an append), made from the view at the
 * moment the call goes. Pure: the reply keeps the state and makes the calls.
 */

/** The text shown no longer begins with what was streamed: appends cannot take it back. */
export class Diverged extends Error {
  constructor() {
    super("the answer shown changed under its stream");
    this.name = "Diverged";
  }
}

/** A stream's part of the answer and the cards it shows, by key (`status`, `step:<id>`). */
export type PlannedPart = StreamPart & { cards: Map<string, Card> };

export interface PlanInput {
  view: ReplyView;
  part: PlannedPart;
  /** The answer's text streamed so far, over every message of the reply. */
  streamed: string;
  limits: StreamLimits;
  turnId: string;
  /** A start (the message's first call): it carries the Stop button. */
  starting: boolean;
  /** Words flowed at the last call, and no renewal was due since. */
  writing: boolean;
  /** Nothing was sent for long: something harmless must go (the status card). */
  keepAlive: boolean;
  /** The text is still growing: its last character waits (stream-layout.ts). */
  holdTail: boolean;
}

/** What one call sends, and what the stream shows once it landed. */
export interface Plan {
  chunks: StreamChunk[];
  /** The view's text the plan was made from. */
  body: string;
  text: TextStep;
  cards: Map<string, Card>;
  /** Words of the answer are among the chunks. */
  wrote: boolean;
}

const STATUS = "status";

/**
 * The status card and step cards that changed, then the answer's next words; a start also
 * carries the Stop button, and the status card when it has nothing else to show. Undefined
 * when there is nothing to send. Throws Diverged when the text no longer extends the stream.
 */
export function planStream(input: PlanInput): Plan | undefined {
  const { view, part, starting } = input;
  if (!view.body.startsWith(input.streamed)) throw new Diverged();
  const text = firstWords(nextText(view.body, part, input.limits, input.holdTail), input);
  const wrote = text.sent > part.sent;
  const cards = new Map(part.cards);
  const chunks: StreamChunk[] = [];
  for (const step of view.steps ?? []) {
    // A new message shows again only the steps still going.
    if (starting && (step.status === "complete" || step.status === "error")) continue;
    const key = `step:${step.id}`;
    const changed = stepChunk(step, cards.get(key));
    if (!changed) continue;
    chunks.push(changed.chunk);
    cards.set(key, changed.card);
  }
  const alone = starting && chunks.length === 0 && !wrote;
  const card = statusFor(input, wrote, cards.get(STATUS), alone);
  if (card) {
    chunks.unshift(statusChunk(card));
    cards.set(STATUS, card);
  }
  if (starting) chunks.push(stopChunk(input.turnId));
  const words = (starting ? part.reopen : "") + text.append;
  if (words !== "") chunks.push(textChunk(words));
  if (chunks.length === 0 && !text.next) return undefined;
  return { chunks, body: view.body, text, cards, wrote };
}

const READABLE = /[\p{L}\p{N}]/u;

/**
 * Before the answer shows anything to read, markup alone ("## ") waits for the words after
 * it: sent alone, it would spend the message's next append and hold the first words back.
 */
function firstWords(step: TextStep, input: PlanInput): TextStep {
  if (step.next || READABLE.test(input.streamed) || READABLE.test(step.append)) return step;
  return { append: "", sent: input.part.sent };
}

/**
 * The status card to send, if it changes (or must be sent: a renewal, or a start with nothing
 * else): in progress while the reply waits or no words flow, done once they do. A card shows
 * only while it has something to say: a wait, a renewal, or a start without words or steps.
 */
function statusFor(
  input: PlanInput,
  wrote: boolean,
  shown: Card | undefined,
  alone: boolean,
): Card | undefined {
  const { view, keepAlive } = input;
  const shownWords = wrote || input.streamed.trim() !== "";
  const wanted = statusCard(view.phase, shownWords, wrote || (input.writing && !keepAlive));
  const waiting = view.phase.kind !== "working";
  if (shown === undefined && !alone && !keepAlive && !waiting) return undefined;
  // A card that is done keeps the words it last said.
  const card =
    wanted.status === "complete"
      ? { ...wanted, title: (shown?.title ?? wanted.title).replace(/…$/, "") }
      : wanted;
  const same = shown && shown.title === card.title && shown.status === card.status;
  return same && !keepAlive ? undefined : card;
}
