/**
 * How much of an answer a person can read in Slack at any moment, and how far that lags
 * what the service has written: pure arithmetic over two stamped timelines (the
 * simulator's pieces, the fake Slack's message changes).
 *
 * What a person reads of an answer is counted in its readable characters (letters and
 * digits): markup such as a lone "##", a list bullet or a fence shows no text, and the
 * bot's rendering may change punctuation and whitespace but not the words.
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

export interface Progress {
  /** When the thread first showed answer text, ms (epoch). */
  firstTextAt: number | undefined;
  /** From the service's first piece to the first state showing answer text, ms. */
  firstTextMs: number | undefined;
  /** When the whole answer was first readable in Slack, ms (epoch). */
  completeAt: number | undefined;
  /**
   * The most the readable text was ever behind the written text, ms: at each moment, the
   * age of the oldest written character not yet shown (0 when everything written is shown).
   */
  lagMaxMs: number;
  /** The same lag every `sampleMs` from the first piece until complete (or `until`), ms. */
  lagSamplesMs: number[];
}

/**
 * Follows one answer. `written`: the characters written so far after each piece (in time
 * order); `shown`: what Slack showed after each change of the thread (in time order);
 * `firstPieceAt`: when the service's first piece left; `until`: the end of observation,
 * for an answer never shown whole.
 */
export function follow(
  written: readonly Step[],
  shown: readonly Step[],
  firstPieceAt: number,
  until: number,
  sampleMs = 100,
): Progress {
  const total = written.at(-1)?.count ?? 0;
  /** When the j-th readable character (1-based) was written. */
  const writtenAt = (j: number): number => {
    for (const step of written) if (step.count >= j) return step.at;
    return Number.POSITIVE_INFINITY;
  };
  const firstShown = shown.find((s) => s.count > 0);
  const complete = total > 0 ? shown.find((s) => s.count >= total) : undefined;
  const end = complete?.at ?? until;
  /** The lag at `t`, seeing `count` characters. */
  const lagAt = (t: number, count: number): number => {
    const oldest = writtenAt(count + 1);
    return oldest < t ? t - oldest : 0;
  };

  // Between two changes the lag only grows: its maximum is just before a change, or at the end.
  let lagMaxMs = 0;
  let count = 0;
  for (const step of shown) {
    if (step.at > end) break;
    lagMaxMs = Math.max(lagMaxMs, lagAt(step.at, count));
    count = step.count;
  }
  if (complete === undefined) lagMaxMs = Math.max(lagMaxMs, lagAt(until, count));

  const lagSamplesMs: number[] = [];
  let next = 0;
  count = 0;
  for (let t = firstPieceAt; t <= end; t += sampleMs) {
    while (next < shown.length && (shown[next] as Step).at <= t)
      count = (shown[next++] as Step).count;
    lagSamplesMs.push(lagAt(t, count));
  }

  return {
    firstTextAt: firstShown?.at,
    firstTextMs: firstShown === undefined ? undefined : firstShown.at - firstPieceAt,
    completeAt: complete?.at,
    lagMaxMs,
    lagSamplesMs,
  };
}
