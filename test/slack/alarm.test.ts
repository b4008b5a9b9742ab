import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Alarm } from "../../src/slack/alarm.js";

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("Alarm", () => {
  it("keeps one timer, rings at the latest setting, and can be cleared", () => {
    const rings: number[] = [];
    const alarm = new Alarm(() => rings.push(Date.now()), Date.now);
    alarm.set(500);
    alarm.set(500);
    alarm.set(300);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1_000);
    expect(rings).toEqual([300]);
    alarm.set(2_000);
    alarm.clear();
    vi.advanceTimersByTime(5_000);
    expect(rings).toEqual([300]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rings at once for an instant already past", () => {
    const rings: number[] = [];
    const alarm = new Alarm(() => rings.push(Date.now()), Date.now);
    vi.advanceTimersByTime(1_000);
    alarm.set(200);
    vi.advanceTimersByTime(0);
    expect(rings).toEqual([1_000]);
  });
});
