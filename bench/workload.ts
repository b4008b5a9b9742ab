import { generateAnswer } from "../tools/simulator/answers.js";

/** One conversation of a scenario: who asks what, and where. */
export interface PlannedConversation {
  index: number;
  channel: string;
  user: string;
  /** What the person types after the bot's mention; unique, so a service thread maps back. */
  question: string;
}

export interface Workload {
  conversations: PlannedConversation[];
  /**
   * The answers the simulator writes, one per run in the order the runs start (which is not
   * always the order of the questions: fidelity compares each thread with its own run).
   */
  answers: string[];
}

export interface WorkloadOptions {
  n: number;
  channels: number;
  users: number;
  minChars: number;
  maxChars: number;
  seed: number;
}

/** mulberry32: repeatable lengths from the seed. */
function random(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * N conversations spread round robin over channels and people, and N realistic Markdown
 * answers (headings, lists, a code block, a link) of lengths drawn evenly from
 * [minChars, maxChars] (the generator ends on a whole block, so a few fall short). The same
 * options always give the same workload.
 */
export function planWorkload(options: WorkloadOptions): Workload {
  const rng = random(options.seed);
  const span = options.maxChars - options.minChars + 1;
  const conversations: PlannedConversation[] = [];
  const answers: string[] = [];
  for (let index = 0; index < options.n; index++) {
    const question = `question ${index}: how should I handle this, case ${options.seed}-${index}?`;
    conversations.push({
      index,
      channel: `C${String(index % options.channels).padStart(6, "0")}`,
      user: `U${String(index % options.users).padStart(6, "0")}`,
      question,
    });
    answers.push(generateAnswer(question, 0, options.minChars + Math.floor(rng() * span)));
  }
  return { conversations, answers };
}

/**
 * An answer cut into pieces of exactly `size` characters (the last may be shorter), as the
 * service writes it: Unicode code points, so no character is split. Unlike the simulator's
 * own word-like tokens, every piece has the same length, so the writing speed is exact.
 */
export function pieces(answer: string, size: number): string[] {
  const chars = Array.from(answer);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}
