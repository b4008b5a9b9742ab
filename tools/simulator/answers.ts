import {
  type AnswerTopic,
  BULLET_CLAUSES,
  FILLER_SENTENCES,
  SENTENCES,
  STEPS,
  SUBHEADINGS,
  TOPICS,
} from "./answer-topics.js";
import { tokenize } from "./tokens.js";

/**
 * Where a run's answer comes from: a script a test set, else a deterministic Markdown
 * generator. The generator is seeded from the question and the run's ordinal within its
 * thread (never from ids, which are random), so the same question gets the same answer in
 * a fresh simulator and a follow-up run on the same question gets a different one.
 */

/** A step of a run as its stream reports it (`event: step`, see docs/simulator.md). */
export interface SimulatorStep {
  /** Stable across updates of the same step. */
  id: string;
  title: string;
  status: "pending" | "in_progress" | "complete" | "error";
  details?: string;
}

/** One step event of a script: a step as it begins or changes. */
export interface ScriptedStep extends SimulatorStep {
  /**
   * Reported once at least this many characters of the answer are written, before the next
   * chunk (default 0: before any text; past the end: after the last chunk, before the run
   * ends). Each step event takes one token tick of its own, as a chunk does.
   */
  atChars?: number;
}

/** What a test can script for the next run (or every run, as the default answer). */
export interface ScriptedAnswer {
  /** The whole answer; it is cut into ~4-character chunks. */
  text?: string;
  /** The exact increments to write, one per token tick (wins over `text`). */
  chunks?: string[];
  /** The run ends `failed` with this error text (output null). */
  fail?: string;
  /** Fail once at least this many characters are written (whole chunks). Default 0. */
  failAfterChars?: number;
  /** Reported as the run's `modelUsed` instead of the one its settings imply. */
  modelUsed?: string;
  /** Chunks written per second for this run; `Infinity` writes everything at once. */
  tokensPerSecond?: number;
  /** The run writes its text and then never ends until it is stopped. */
  hang?: boolean;
  /** Step events reported while the answer is written, interleaved with its chunks. */
  steps?: ScriptedStep[];
}

/** Everything a run needs to know to write its answer. */
export interface AnswerPlan {
  chunks: string[];
  /** Step events in the order they are reported (by `atChars`, then as scripted). */
  steps: { step: SimulatorStep; atChars: number }[];
  /** Set when the run must fail: error text and the characters to write first. */
  failure?: { error: string; afterChars: number };
  modelUsed?: string;
  tokensPerSecond: number;
  hang: boolean;
}

export const DEFAULT_FAILURE_TEXT = "simulated failure";

export function planAnswer(
  script: ScriptedAnswer | undefined,
  generated: () => string,
  defaults: { tokensPerSecond: number; hang: boolean },
): AnswerPlan {
  const chunks = script?.chunks ?? tokenize(script?.text ?? generated());
  const steps = (script?.steps ?? []).map(({ atChars = 0, ...step }) => ({ step, atChars }));
  const plan: AnswerPlan = {
    chunks: chunks.filter((chunk) => chunk !== ""),
    // A stable sort: events at the same position keep the script's order.
    steps: steps.sort((a, b) => a.atChars - b.atChars),
    tokensPerSecond: script?.tokensPerSecond ?? defaults.tokensPerSecond,
    hang: (script?.hang ?? false) || defaults.hang,
  };
  if (script?.fail !== undefined || script?.failAfterChars !== undefined) {
    plan.failure = {
      error: script.fail ?? DEFAULT_FAILURE_TEXT,
      afterChars: script.failAfterChars ?? 0,
    };
  }
  if (script?.modelUsed !== undefined) plan.modelUsed = script.modelUsed;
  return plan;
}

/** 32-bit FNV-1a, enough to spread question strings over seeds. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a tiny seeded PRNG; Math.random would make answers unrepeatable. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;

function pick<T>(rng: Rng, items: readonly T[]): T {
  const item = items[Math.floor(rng() * items.length)];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

/** Default answer lengths vary over this range (characters), deterministically. */
export const DEFAULT_LENGTH_RANGE = { min: 400, max: 1600 } as const;

export function answerSeed(question: string, ordinal: number): string {
  return `${question}\u0000${ordinal}`;
}

/**
 * A realistic Markdown answer of about `length` characters (default 400–1600 from the
 * seed). The opening blocks carry every construct a renderer must handle (heading, bold,
 * inline code, bullets, a closed fenced code block, a numbered list, a link); longer
 * answers add more blocks. It ends after a whole block or sentence (never mid-word, never
 * inside a code block) and never exceeds `length` (below 3 characters it is "OK.").
 */
export function generateAnswer(question: string, ordinal: number, length?: number): string {
  const rng = random(hash(answerSeed(question, ordinal)));
  const { min, max } = DEFAULT_LENGTH_RANGE;
  const target = length ?? min + Math.floor(rng() * (max - min + 1));
  const topic = pick(rng, TOPICS);
  let out = "";
  for (const block of blocks(rng, topic)) {
    const separator = out === "" ? "" : "\n\n";
    const room = target - out.length - separator.length;
    if (block.length <= room) {
      out += separator + block;
      continue;
    }
    const tail = filler(rng, room);
    if (tail !== "") out += separator + tail;
    else if (out === "") out = "OK.";
    break;
  }
  return out;
}

function* blocks(rng: Rng, topic: AnswerTopic): Generator<string> {
  yield `## ${topic.title}`;
  yield `The key to ${topic.subject} is **${pick(rng, topic.terms)}**, and most of the work happens in \`${pick(rng, topic.identifiers)}\`. ${paragraph(rng, topic, 1)}`;
  yield bullets(rng, topic);
  yield codeBlock(topic);
  yield steps(rng, topic);
  yield `For more detail, see [the ${topic.subject} guide](https://example.com/docs/${topic.slug}).`;
  for (;;) {
    const kind = Math.floor(rng() * 4);
    if (kind === 0) yield `### ${pick(rng, SUBHEADINGS)}`;
    if (kind === 1) yield bullets(rng, topic);
    if (kind === 2) yield steps(rng, topic);
    yield paragraph(rng, topic, 3);
  }
}

/** `n` different items (fewer when the list is shorter). */
function pickDistinct<T>(rng: Rng, items: readonly T[], n: number): T[] {
  const pool = [...items];
  const chosen: T[] = [];
  while (chosen.length < n && pool.length > 0) {
    chosen.push(pool.splice(Math.floor(rng() * pool.length), 1)[0] as T);
  }
  return chosen;
}

/** `count` different sentences about the topic. */
function paragraph(rng: Rng, topic: AnswerTopic, count: number): string {
  return pickDistinct(rng, SENTENCES, count)
    .map((template) => {
      const [t = "", u = ""] = pickDistinct(rng, topic.terms, 2);
      return template
        .replace("{t}", t)
        .replace("{u}", u)
        .replace("{s}", topic.subject)
        .replace("{i}", `\`${pick(rng, topic.identifiers)}\``);
    })
    .join(" ");
}

function bullets(rng: Rng, topic: AnswerTopic): string {
  const terms = pickDistinct(rng, topic.terms, 2 + Math.floor(rng() * 3));
  const clauses = pickDistinct(rng, BULLET_CLAUSES, terms.length);
  return terms
    .map((term, i) => `- **${term[0]?.toUpperCase()}${term.slice(1)}**: ${clauses[i]}`)
    .join("\n");
}

function steps(rng: Rng, topic: AnswerTopic): string {
  // Distinct steps in their natural order (measure before rolling out).
  const indices = pickDistinct(rng, [...STEPS.keys()], 2 + Math.floor(rng() * 3));
  const chosen = indices.sort((a, b) => a - b).map((i) => STEPS[i] ?? "");
  return chosen
    .map((step, i) => {
      const [t = "", u = ""] = pickDistinct(rng, topic.terms, 2);
      const filled = step
        .replace("{t}", t)
        .replace("{u}", u)
        .replace("{i}", `\`${pick(rng, topic.identifiers)}\``);
      return `${i + 1}. ${filled}`;
    })
    .join("\n");
}

function codeBlock(topic: AnswerTopic): string {
  const fence = "```";
  return [`${fence}${topic.language}`, topic.code, fence].join("\n");
}

/** Filler sentences shorter than this (characters) only close the last gap. */
const SHORT_SENTENCE = 20;

/**
 * Filler sentences, whole, as many as fit in `room` characters ("" when none fits): long
 * ones while they fit, then at most one short one to close the gap.
 */
function filler(rng: Rng, room: number): string {
  let text = "";
  const add = (candidates: readonly string[]) => {
    const left = room - text.length - (text === "" ? 0 : 1);
    const fits = candidates.filter((s) => s.length <= left && !text.includes(s));
    if (fits.length === 0) return false;
    text += (text === "" ? "" : " ") + pick(rng, fits);
    return true;
  };
  while (add(FILLER_SENTENCES.filter((s) => s.length >= SHORT_SENTENCE)));
  add(FILLER_SENTENCES.filter((s) => s.length < SHORT_SENTENCE));
  return text;
}
