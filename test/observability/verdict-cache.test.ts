import { describe, expect, it, vi } from "vitest";
import { cachedVerdict } from "../../src/observability/verdict-cache.js";
import { ManualClock } from "../support/manual-clock.js";

describe("a cached readiness verdict", () => {
  it("asks once for 200 callers at once, and once more only after 10 s", async () => {
    const clock = new ManualClock();
    let asked = 0;
    const verdict = cachedVerdict(
      async () => {
        asked += 1;
        return true;
      },
      { clock },
    );
    expect(await Promise.all(Array.from({ length: 200 }, verdict))).toEqual(Array(200).fill(true));
    expect(asked).toBe(1);
    for (let i = 0; i < 200; i++) {
      await clock.advance(49);
      await verdict();
    }
    // 200 × 49 ms = 9.8 s: still the first verdict.
    expect(asked).toBe(1);
    await clock.advance(200);
    expect(await verdict()).toBe(true);
    expect(asked).toBe(2);
  });

  it("shares the check in flight, even one slower than 10 s", async () => {
    const clock = new ManualClock();
    const answers: ((ok: boolean) => void)[] = [];
    const verdict = cachedVerdict(() => new Promise<boolean>((resolve) => answers.push(resolve)), {
      clock,
    });
    const first = verdict();
    await clock.advance(15_000);
    const second = verdict();
    expect(answers).toHaveLength(1);
    answers[0]?.(true);
    expect(await first).toBe(true);
    expect(await second).toBe(true);
    // Settled 15 s after it was asked: the next caller asks anew.
    const third = verdict();
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    answers[1]?.(false);
    expect(await third).toBe(false);
  });

  it("keeps a failed verdict, a throw among them, for 10 s too", async () => {
    const clock = new ManualClock();
    let asked = 0;
    const verdict = cachedVerdict(
      () => {
        asked += 1;
        throw new Error("service down");
      },
      { clock },
    );
    expect(await verdict()).toBe(false);
    await clock.advance(9_999);
    expect(await verdict()).toBe(false);
    expect(asked).toBe(1);
    await clock.advance(1);
    expect(await verdict()).toBe(false);
    expect(asked).toBe(2);
  });

  it("takes maxAgeMs", async () => {
    const clock = new ManualClock();
    let asked = 0;
    const verdict = cachedVerdict(
      () => {
        asked += 1;
        return true;
      },
      { clock, maxAgeMs: 1_000 },
    );
    await verdict();
    await clock.advance(1_000);
    await verdict();
    expect(asked).toBe(2);
  });
});
