import { describe, expect, it } from "vitest";
import { fidelity, isExact, max, median, percentile } from "../../bench/stats.js";

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
