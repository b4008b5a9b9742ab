import { describe, expect, it } from "vitest";
import { pieces, planWorkload } from "../../bench/workload.js";

const options = { n: 40, channels: 4, users: 3, minChars: 300, maxChars: 3000, seed: 7 };

describe("bench workload", () => {
  it("spreads N unique questions over the channels and people", () => {
    const { conversations } = planWorkload(options);
    expect(conversations).toHaveLength(40);
    expect(new Set(conversations.map((c) => c.question)).size).toBe(40);
    expect(new Set(conversations.map((c) => c.channel)).size).toBe(4);
    expect(new Set(conversations.map((c) => c.user)).size).toBe(3);
    expect(conversations[5]?.question).toMatch(/^question 5: /);
  });

  it("writes answers within the length range, the same for the same seed", () => {
    const { answers } = planWorkload(options);
    expect(answers).toHaveLength(40);
    for (const answer of answers) expect(answer.length).toBeLessThanOrEqual(3000);
    expect(Math.min(...answers.map((a) => a.length))).toBeGreaterThan(100);
    expect(Math.max(...answers.map((a) => a.length))).toBeGreaterThan(1500);
    expect(planWorkload(options).answers).toEqual(answers);
    expect(planWorkload({ ...options, seed: 8 }).answers).not.toEqual(answers);
  });

  it("cuts an answer into pieces of exactly the size asked, never inside a character", () => {
    expect(pieces("## Deploying", 4)).toEqual(["## D", "eplo", "ying"]);
    expect(pieces("a → b 😀c", 4)).toEqual(["a → ", "b 😀c"]);
    expect(pieces("abcde", 4).join("")).toBe("abcde");
    expect(pieces("", 4)).toEqual([]);
  });
});
