import { describe, expect, it } from "vitest";
import { disagreement } from "../../bench/summary.js";

describe("the bench against the outside view", () => {
  const ours = new Map([
    ["question 0", 25],
    ["question 1", 1_000],
  ]);

  it("is the largest difference for one answer", () => {
    expect(
      disagreement(ours, [
        { question: "question 0", ms: 25 },
        { question: "question 1", ms: 1_004 },
      ]),
    ).toBe(4);
  });

  it("is infinite when only one of them saw an answer's text, and NaN with nothing to compare", () => {
    expect(disagreement(ours, [{ question: "question 0", ms: undefined }])).toBe(Infinity);
    expect(disagreement(ours, [{ question: "question 2", ms: 30 }])).toBe(Infinity);
    expect(disagreement(ours, [{ question: "question 2", ms: undefined }])).toBe(0);
    expect(disagreement(ours, [])).toBeNaN();
  });
});
