import { describe, expect, it } from "vitest";
import { FULL, gcraRules, gcraTakeable } from "../../src/budgets/gcra.js";
import { TokenBucket } from "../../src/budgets/token-bucket.js";

describe("TokenBucket", () => {
  it("starts full, lets a burst through, then one token per 60_000 / perMinute ms", () => {
    const bucket = new TokenBucket(40, 4);
    const taken = [0, 0, 0, 0].map(() => bucket.tryTake(0));
    expect(taken).toEqual([true, true, true, true]);
    expect(bucket.tryTake(0)).toBe(false);
    expect(bucket.readyAt(0)).toBe(1_500);
    expect(bucket.tryTake(1_499)).toBe(false);
    expect(bucket.tryTake(1_500)).toBe(true);
    expect(bucket.readyAt(1_500)).toBe(3_000);
  });

  it("refills up to its capacity and no further", () => {
    const bucket = new TokenBucket(60, 2);
    expect(bucket.tryTake(0)).toBe(true);
    // Idle for a long time: still only 2 back to back.
    expect([bucket.tryTake(100_000), bucket.tryTake(100_000), bucket.tryTake(100_000)]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("keeps any 60 s window within capacity + perMinute with a fractional spacing", () => {
    const bucket = new TokenBucket(47, 3);
    const times: number[] = [];
    for (let t = 0; t < 600_000; t++) {
      if (bucket.readyAt(t) === t && bucket.tryTake(t)) times.push(t);
    }
    let max = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while ((times[i] ?? 0) - (times[j] ?? 0) >= 60_000) j++;
      max = Math.max(max, i - j + 1);
    }
    expect(max).toBeLessThanOrEqual(50);
    expect(times.length).toBeGreaterThanOrEqual(3 + 47 * 10 - 1);
  });

  it("rejects a rate or capacity that cannot work", () => {
    expect(() => new TokenBucket(0, 1)).toThrow(RangeError);
    expect(() => new TokenBucket(10, 0.5)).toThrow(RangeError);
  });

  it("counts the takes a batch may make as many single takes at one instant would", () => {
    for (const [perMinute, capacity] of [
      [40, 4],
      [47, 3],
      [7, 1],
      [250, 10],
    ] as const) {
      const rules = gcraRules(perMinute, capacity);
      const bucket = new TokenBucket(perMinute, capacity);
      let arrival = FULL;
      for (let step = 0; step < 400; step++) {
        // Instants a fraction of a spacing apart, some of them not whole ms.
        const now = Math.floor(step * rules.spacingMs * 0.37) + (step % 5 === 0 ? 0.5 : 0);
        const count = (step % 6) + 1;
        const batch = gcraTakeable(arrival, now, count, rules);
        let singles = 0;
        while (singles < count && bucket.tryTake(now)) singles++;
        expect([step, batch]).toEqual([step, singles]);
        if (batch > 0) arrival = Math.max(arrival, now) + batch * rules.spacingMs;
      }
    }
  });
});
