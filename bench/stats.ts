/**
 * The arithmetic of the benchmark, as pure functions: percentiles and fidelity (how far the
 * text a person sees lags the written text is visibility.ts).
 */

/** The p-th percentile (0–100) by linear interpolation between closest ranks; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be 0–100, got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lo = sorted[low] as number;
  const hi = sorted[high] as number;
  return lo + (hi - lo) * (rank - low);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export function max(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => Math.max(a, b));
}

/**
 * Whether a thread shows the answer exactly: the visible texts of the bot's reply messages,
 * joined by the newline that the splitter drops at each cut, contain the run's output.
 */
export function isExact(transcript: readonly string[], output: string | undefined): boolean {
  if (output === undefined || output === "") return false;
  return transcript.join("\n").includes(output);
}

/** The share (0–1) of answers shown exactly; NaN when there are none. */
export function fidelity(exact: readonly boolean[]): number {
  if (exact.length === 0) return Number.NaN;
  return exact.filter(Boolean).length / exact.length;
}
