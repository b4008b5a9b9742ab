import { describe, expect, it } from "vitest";
import {
  fidelity,
  isExact,
  lagAt,
  max,
  median,
  percentile,
  timeOfChars,
  type Writing,
  writtenAt,
} from "../../bench/stats.js";

describe("percentile", () => {
  it("interpolates between the closest ranks", () => {
    const values = [10, 20, 30, 40];
    expect(percentile(values, 0)).toBe(10);
    expect(percentile(values, 100)).toBe(40);
    expect(percentile(values, 50)).toBe(25);
    expect(percentile(values, 99)).toBeCloseTo(39.7, 10);
  });

  it("does not depend on the input order and leaves the input alone", () => {
    const values = [5, 1, 4, 2, 3];
    expect(percentile(values, 50)).toBe(3);
    expect(values).toEqual([5, 1, 4, 2, 3]);
  });

  it("gives the single value for one sample and NaN for none", () => {
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it("refuses a percentile outside 0–100", () => {
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], -1)).toThrow(RangeError);
  });

  it("has median and max", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 4])).toBe(2.5);
    expect(max([1, 9, 3])).toBe(9);
    expect(max([])).toBeNaN();
  });
});

describe("fidelity", () => {
  const answer = "## Plan\n\n- one\n- two";

  it("is exact when the reply shows the run's output, with a status line around it", () => {
    expect(isExact([`${answer}\nAnswered by flash`], answer)).toBe(true);
  });

  it("joins the parts of a long answer at the newline the splitter dropped", () => {
    expect(isExact(["## Plan\n", "- one\n- two\nAnswered by max"], answer)).toBe(true);
  });

  it("is not exact when a character is lost, changed or the parts are out of order", () => {
    expect(isExact(["## Plan\n\n- one\n- tw"], answer)).toBe(false);
    expect(isExact(["## Plan\n\n- one\n- Two"], answer)).toBe(false);
    expect(isExact(["- one\n- two", "## Plan\n"], answer)).toBe(false);
  });

  it("is not exact without an output", () => {
    expect(isExact(["anything"], undefined)).toBe(false);
    expect(isExact(["anything"], "")).toBe(false);
  });

  it("is the share of exact answers", () => {
    expect(fidelity([true, true, false, true])).toBe(0.75);
    expect(fidelity([true])).toBe(1);
    expect(fidelity([])).toBeNaN();
  });
});

describe("staleness", () => {
  // 1,000 characters written evenly from t = 1,000 ms to t = 6,000 ms: 200 per second.
  const w: Writing = { start: 1_000, end: 6_000, total: 1_000 };

  it("knows how much the service had written at any time", () => {
    expect(writtenAt(w, 0)).toBe(0);
    expect(writtenAt(w, 1_000)).toBe(0);
    expect(writtenAt(w, 3_500)).toBe(500);
    expect(writtenAt(w, 6_000)).toBe(1_000);
    expect(writtenAt(w, 60_000)).toBe(1_000);
    expect(timeOfChars(w, 500)).toBe(3_500);
    expect(timeOfChars(w, 0)).toBe(1_000);
    expect(timeOfChars(w, 2_000)).toBe(6_000);
  });

  it("is zero when the reply shows everything written so far", () => {
    expect(lagAt(w, 3_500, 500)).toEqual({ chars: 0, ms: 0 });
    // An interim render's closing fence makes the visible text a little longer: still caught up.
    expect(lagAt(w, 3_500, 504)).toEqual({ chars: 0, ms: 0 });
  });

  it("is the age of the visible text while the answer streams", () => {
    // At 3.5 s, 500 written; 300 shown, which the service had written at 2.5 s.
    expect(lagAt(w, 3_500, 300)).toEqual({ chars: 200, ms: 1_000 });
  });

  it("keeps growing after the run ended until the final text shows", () => {
    expect(lagAt(w, 10_000, 1_000)).toEqual({ chars: 0, ms: 0 });
    expect(lagAt(w, 10_000, 0)).toEqual({ chars: 1_000, ms: 9_000 });
    expect(lagAt(w, 10_000, 900)).toEqual({ chars: 100, ms: 4_500 });
  });

  it("copes with an answer written all at once", () => {
    const instant: Writing = { start: 1_000, end: 1_000, total: 50 };
    expect(writtenAt(instant, 1_000)).toBe(50);
    expect(lagAt(instant, 1_500, 0)).toEqual({ chars: 50, ms: 500 });
  });
});
