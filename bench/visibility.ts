/**
 * How much of an answer a person can read in Slack at any moment, and how far that lags
 * what the service has written: pure arithmetic over two stamped timelines (the
 * simulator's pieces, the fake Slack's message changes).
 *
 * What a person reads of an answer is counted in its readable characters (letters and
 * digits): markup such as a lone "##", a list bullet or a fence shows no text, and the
 * bot's rendering may change punctuation and whitespace but not the words. And a person reads
 * words, not fragments: a state shows an answer only up to the end of its last whole word
 * (wordEnds, wholeWords), so "The qu" of "The quick fox" shows "The".
 */

/** A message's content as the fake Slack keeps it. */
export interface Content {
  text: string;
  blocks?: readonly { type: string; [key: string]: unknown }[];
}

/** The letters and digits of `text`, in order. */
export function readable(text: string): string {
  return text.replace(/[^\p{L}\p{N}]/gu, "");
}

/**
 * The part of a message that may carry answer text: everything a person sees except the
 * small print of `context` blocks (status lines such as "Writing…", "Answered by …") and
 * elements that are no text (buttons). Without blocks, the message's text (a plain post,
 * or a streamed message's Markdown).
 */
export function answerPart(content: Content): string {
  const blocks = content.blocks ?? [];
  if (blocks.length === 0) return content.text;
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.type === "markdown" && typeof block.text === "string") parts.push(block.text);
    const text = block.text as { text?: unknown } | undefined;
    if ((block.type === "section" || block.type === "header") && typeof text?.text === "string") {
      parts.push(text.text);
    }
  }
  return parts.join("\n");
}

/**
 * Where the words of `text` end, in readable characters counted from its start, ascending:
 * a word is a maximal run of letters and digits (so it is followed by some other character,
 * or ends the text). "The quick fox" gives [3, 8, 11]; the last is always the readable length.
 */
export function wordEnds(text: string): number[] {
  const ends: number[] = [];
  let count = 0;
  // The same units as readable(text).length (UTF-16), so that the counts compare.
  for (const word of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    count += word[0].length;
    ends.push(count);
  }
  return ends;
}

/** Of `chars` readable characters shown, those of whole words: the largest word end ≤ `chars`. */
export function wholeWords(ends: readonly number[], chars: number): number {
  let low = 0;
  let high = ends.length;
  // The number of ends ≤ chars, by bisection (ends ascend).
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((ends[mid] as number) <= chars) low = mid + 1;
    else high = mid;
  }
  return low === 0 ? 0 : (ends[low - 1] as number);
}

/** How many readable characters of the answer `shownText` shows, counted from its start. */
export function shownChars(answerReadable: string, shownText: string): number {
  const shown = readable(shownText);
  let i = 0;
  while (i < shown.length && i < answerReadable.length && shown[i] === answerReadable[i]) i++;
  return i;
}

/** A step of a count over time: from `at` (ms) on, `count` readable characters. */
export interface Step {
  at: number;
  count: number;
}

/** One answer as the service wrote it. */
export interface Written {
  /** The readable characters written so far after each piece, in time order, one step a piece. */
  steps: readonly Step[];
  /** Where the words of its final text end (wordEnds). */
  wordEnds: readonly number[];
  /** When the person's question reached Slack, ms (epoch), when known. */
  askedAt?: number | undefined;
}

export interface Progress {
  /** When the thread first showed the answer's first word whole, ms (epoch). */
  firstWordAt: number | undefined;
  /** From the service's first piece to the first state showing the first word whole, ms. */
  firstWordMs: number | undefined;
  /** The same from the question reaching Slack, ms. */
  askedFirstWordMs: number | undefined;
  /** When the whole answer was first readable in Slack, ms (epoch). */
  completeAt: number | undefined;
  /** From the service's last piece to the whole answer readable, ms. */
  afterLastPieceMs: number | undefined;
  /** From the question reaching Slack to the whole answer readable, ms. */
  askedCompleteMs: number | undefined;
  /**
   * The most the readable text was ever behind the written text, ms: at each moment, the
   * age of the oldest written character not yet shown in a whole word (0 when every written
   * character is shown).
   */
  lagMaxMs: number;
  /** The same lag every `sampleMs` from the first piece until complete (or `until`), ms. */
  lagSamplesMs: number[];
}

/**
 * Follows one answer. `written`: the service's side; `shown`: after each change of the
 * thread (in time order), how many readable characters of the answer it showed from its
 * start (shownChars), fragments included: only whole words count here; `until`: the end of
 * observation, for an answer never shown whole.
 */
export function follow(
  written: Written,
  shown: readonly Step[],
  until: number,
  sampleMs = 100,
): Progress {
  const pieces = written.steps;
  const firstPieceAt = pieces[0]?.at ?? Number.NaN;
  const lastPieceAt = pieces.at(-1)?.at ?? Number.NaN;
  const total = pieces.at(-1)?.count ?? 0;
  const words: Step[] = shown.map((s) => ({
    at: s.at,
    count: wholeWords(written.wordEnds, s.count),
  }));
  /** When the j-th readable character (1-based) was written. */
  const writtenAt = (j: number): number => {
    for (const step of pieces) if (step.count >= j) return step.at;
    return Number.POSITIVE_INFINITY;
  };
  const firstWord = words.find((s) => s.count > 0);
  const complete = total > 0 ? words.find((s) => s.count >= total) : undefined;
  const end = complete?.at ?? until;
  /** The lag at `t`, seeing `count` characters. */
  const lagAt = (t: number, count: number): number => {
    const oldest = writtenAt(count + 1);
    return oldest < t ? t - oldest : 0;
  };

  // Between two changes the lag only grows: its maximum is just before a change, or at the end.
  let lagMaxMs = 0;
  let count = 0;
  for (const step of words) {
    if (step.at > end) break;
    lagMaxMs = Math.max(lagMaxMs, lagAt(step.at, count));
    count = step.count;
  }
  if (complete === undefined) lagMaxMs = Math.max(lagMaxMs, lagAt(until, count));

  const lagSamplesMs: number[] = [];
  let next = 0;
  count = 0;
  for (let t = firstPieceAt; t <= end; t += sampleMs) {
    while (next < words.length && (words[next] as Step).at <= t)
      count = (words[next++] as Step).count;
    lagSamplesMs.push(lagAt(t, count));
  }

  const since = (at: number | undefined, from: number | undefined) =>
    at === undefined || from === undefined || Number.isNaN(from) ? undefined : at - from;
  return {
    firstWordAt: firstWord?.at,
    firstWordMs: since(firstWord?.at, firstPieceAt),
    askedFirstWordMs: since(firstWord?.at, written.askedAt),
    completeAt: complete?.at,
    afterLastPieceMs: since(complete?.at, lastPieceAt),
    askedCompleteMs: since(complete?.at, written.askedAt),
    lagMaxMs,
    lagSamplesMs,
  };
}
