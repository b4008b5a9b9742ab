import { describe, expect, it } from "vitest";
import { SlidingWindow } from "../../src/budgets/sliding-window.js";

describe("SlidingWindow", () => {
  it("lets the whole window's allowance go at once, then the next as the oldest leaves", () => {
    const window = new SlidingWindow(3, 60_000);
    expect([0, 10, 20].map((t) => window.tryTake(t))).toEqual([true, true, true]);
    expect(window.tryTake(30)).toBe(false);
    expect(window.readyAt(30)).toBe(60_000);
    expect(window.tryTake(59_999)).toBe(false);
    expect(window.tryTake(60_000)).toBe(true);
    expect(window.readyAt(60_000)).toBe(60_010);
  });

  it("never lets more than the limit into any window", () => {
    const window = new SlidingWindow(5, 1_000);
    const taken: number[] = [];
    for (let t = 0; t < 10_000; t += 7) if (window.tryTake(t)) taken.push(t);
    for (const start of taken) {
      expect(taken.filter((t) => t >= start && t < start + 1_000).length).toBeLessThanOrEqual(5);
    }
    expect(taken.length).toBeGreaterThanOrEqual(49);
  });

  it("places takes waiting beyond this window in later ones", () => {
    const window = new SlidingWindow(2, 1_000);
    window.tryTake(0);
    window.tryTake(100);
    expect(window.readyAt(200)).toBe(1_000);
    expect(window.readyAt(200, 1)).toBe(1_100);
    expect(window.readyAt(200, 2)).toBe(2_000);
    expect(window.readyAt(200, 3)).toBe(2_100);
  });

  it("refuses a limit below one", () => {
    expect(() => new SlidingWindow(0)).toThrow(RangeError);
  });
});
