/**
 * The arithmetic of the benchmark, as pure functions: percentiles, fidelity, and how far
 * the text a person sees lags the text the service has written.
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

/**
 * How a run wrote its answer: `total` characters between `start` (first character, ms) and
 * `end` (last character, ms). The simulator writes at an even token rate, so characters are
 * spread evenly over that span.
 */
export interface Writing {
  start: number;
  end: number;
  total: number;
}

/** Characters the service had written at time `t`. */
export function writtenAt(w: Writing, t: number): number {
  if (t < w.start) return 0;
  if (t >= w.end || w.end <= w.start) return w.total;
  return Math.floor((w.total * (t - w.start)) / (w.end - w.start));
}

/** The time at which the service had written `chars` characters. */
export function timeOfChars(w: Writing, chars: number): number {
  if (chars <= 0 || w.total === 0) return w.start;
  if (chars >= w.total) return w.end;
  return w.start + ((w.end - w.start) * chars) / w.total;
}

export interface Lag {
  /** Characters written but not visible. */
  chars: number;
  /** How old the visible text is: since the service wrote the first character not yet shown, ms. */
  ms: number;
}

/**
 * The staleness of one reply at time `t`, seeing `visible` characters of the answer (more
 * than written, e.g. a fence an interim render closes, counts as caught up).
 */
export function lagAt(w: Writing, t: number, visible: number): Lag {
  const written = writtenAt(w, t);
  const shown = Math.min(Math.max(0, visible), w.total);
  if (shown >= written) return { chars: 0, ms: 0 };
  return { chars: written - shown, ms: Math.max(0, t - timeOfChars(w, shown)) };
}
