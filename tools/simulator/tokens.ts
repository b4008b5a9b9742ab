/**
 * Splitting an answer into the increments a run writes. A language model emits tokens of
 * about four characters that follow word pieces, so the chunks here do the same: leading
 * whitespace travels with the next word, and a long word is cut into pieces of at most
 * `CHARS_PER_TOKEN` graphemes. Cutting on grapheme boundaries keeps multibyte characters
 * (emoji, CJK, accents) whole, which is what a client must cope with at the byte level
 * but should never see split inside one increment.
 */

export const CHARS_PER_TOKEN = 4;

const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" });

/** Concatenating the result gives back `text` exactly. */
export function tokenize(text: string): string[] {
  const chunks: string[] = [];
  // A word with the whitespace before it; a trailing run of whitespace stands alone.
  const pieces = text.match(/\s*\S+|\s+/gu) ?? [];
  for (const piece of pieces) {
    let current = "";
    let count = 0;
    for (const { segment } of segmenter.segment(piece)) {
      current += segment;
      count += 1;
      if (count === CHARS_PER_TOKEN) {
        chunks.push(current);
        current = "";
        count = 0;
      }
    }
    if (current !== "") chunks.push(current);
  }
  return chunks;
}

/** An estimate of the tokens in `text` (interface §4 rule 3: counts are estimates). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}
