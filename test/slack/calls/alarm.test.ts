import { describe, expect, it } from "vitest";
import { Alarm } from "../../../src/slack/calls/alarm.js";
import { ManualClock } from "../../support/manual-clock.js";

describe("Alarm", () => {
  it("keeps one timer, rings at the latest setting, and can be cleared", async () => {
    const clock = new ManualClock(0);
    const rings: number[] = [];
    const alarm = new Alarm(() => rings.push(clock.now()), clock);
    alarm.set(500);
    alarm.set(500);
    alarm.set(300);
    expect(clock.pending).toBe(1);
    await clock.advance(1_000);
    expect(rings).toEqual([300]);
    alarm.set(2_000);
    alarm.clear();
    await clock.advance(5_000);
    expect(rings).toEqual([300]);
    expect(clock.pending).toBe(0);
  });

  it("rings at once for an instant already past", async () => {
    const clock = new ManualClock(0);
    const rings: number[] = [];
    const alarm = new Alarm(() => rings.push(clock.now()), clock);
    await clock.advance(1_000);
    alarm.set(200);
    await clock.advance(0);
    expect(rings).toEqual([1_000]);
  });
});
