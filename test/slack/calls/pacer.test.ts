import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { localAllowances } from "../../../src/budgets/local-allowances.js";
import { type EditTarget, Pacer, type PacerOptions } from "../../../src/slack/calls/pacer.js";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";
import { fakeSender, fire, msg, tick, track } from "../../support/fake-edit-sender.js";

let pacers: Pacer<string>[] = [];
/** The system clock runs on vitest's fake timers; the backoff's jitter is fixed at half. */
function pacer(send: (t: EditTarget, p: string) => Promise<void>, options?: PacerOptions) {
  const scheduler = new CallScheduler({ random: () => 0.5 });
  const p = new Pacer<string>(send, { scheduler, ...options });
  pacers.push(p);
  return p;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  for (const p of pacers) p.close();
  pacers = [];
  vi.useRealTimers();
});

describe("Pacer: one message", () => {
  it("sends interim edits at most once per messageIntervalMs, always the latest payload", async () => {
    const s = fakeSender();
    const p = pacer(s.send, { updatesPerMinute: 600, burst: 10 });
    const start = Date.now();
    const given: { t: number; payload: string }[] = [];
    for (let i = 0; i < 50; i++) {
      const payload = `text ${i}`;
      given.push({ t: Date.now(), payload });
      fire(p.edit(msg("m1"), payload));
      await vi.advanceTimersByTimeAsync(100);
    }
    await vi.advanceTimersByTimeAsync(2_000);
    const times = s.calls.map((c) => c.t - start);
    expect(times[0]).toBe(0);
    for (let i = 1; i < times.length; i++) {
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(1_000);
    }
    expect(s.calls.length).toBeGreaterThanOrEqual(5);
    // Each send carries the newest payload given before it: never a stale one.
    for (const call of s.calls) {
      const index = given.findIndex((g) => g.payload === call.payload);
      expect(given[index]?.t).toBeLessThanOrEqual(call.t);
      expect(index).toBeGreaterThanOrEqual(given.filter((g) => g.t < call.t).length - 1);
    }
    expect(s.calls.at(-1)?.payload).toBe("text 49");
  });

  it("coalesces edits given together: only the latest is sent and every promise resolves", async () => {
    const s = fakeSender();
    const p = pacer(s.send);
    const a = track(p.edit(msg("m1"), "a"));
    const b = track(p.edit(msg("m1"), "b"));
    const c = track(p.edit(msg("m1"), "c"));
    await tick();
    expect(s.calls.map((x) => x.payload)).toEqual(["c"]);
    expect([a, b, c].map((x) => [x.settled, x.error])).toEqual([
      [true, undefined],
      [true, undefined],
      [true, undefined],
    ]);
  });

  it("keeps one edit in flight per message and resolves superseded edits when the newer lands", async () => {
    const s = fakeSender(() => ({ latencyMs: 2_500 }));
    const p = pacer(s.send, { updatesPerMinute: 600, burst: 10 });
    const first = track(p.edit(msg("m1"), "v0"));
    await tick();
    const second = track(p.edit(msg("m1"), "v1"));
    await vi.advanceTimersByTimeAsync(1_500);
    expect(s.calls).toHaveLength(1); // interval passed, but v0 is still in flight
    expect(second.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000); // v0 lands at 2.5 s, v1 goes at once
    expect(first.settled).toBe(true);
    expect(s.calls.map((c) => [c.payload, c.t - 1_000_000])).toEqual([
      ["v0", 0],
      ["v1", 2_500],
    ]);
    await vi.advanceTimersByTimeAsync(2_500);
    expect(second).toEqual({ settled: true });
    expect(s.maxLivePerMessage()).toBe(1);
  });

  it("makes a payload given as a maker when its edit goes, only the newest, and sends none made empty", async () => {
    const s = fakeSender();
    const sent: boolean[] = [];
    const p = pacer(s.send, { updatesPerMinute: 600, burst: 10, onSent: (_t, f) => sent.push(f) });
    const made: string[] = [];
    const maker = (payload: string | undefined) => () => {
      made.push(payload ?? "nothing");
      return payload;
    };
    fire(p.edit(msg("m1"), maker("a")));
    await tick();
    const b = track(p.edit(msg("m1"), maker("b")));
    const c = track(p.edit(msg("m1"), maker("c")));
    await vi.advanceTimersByTimeAsync(999);
    expect(made).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(made).toEqual(["a", "c"]);
    // Made nothing new to show: not sent, and no more holding the next edit back than if never given.
    const none = track(p.edit(msg("m1"), maker(undefined)));
    await vi.advanceTimersByTimeAsync(1_000);
    expect([b, c, none]).toEqual([{ settled: true }, { settled: true }, { settled: true }]);
    fire(p.edit(msg("m1"), "d"));
    await tick();
    expect(made).toEqual(["a", "c", "nothing"]);
    expect(s.calls.map((x) => [x.payload, x.t - 1_000_000])).toEqual([
      ["a", 0],
      ["c", 1_000],
      ["d", 2_000],
    ]);
    expect(sent).toEqual([false, false, false]);
  });

  it("spends none of the minute's edits on an edit made empty", async () => {
    const s = fakeSender();
    const p = pacer(s.send, { updatesPerMinute: 2 });
    const empty = track(p.edit(msg("m1"), () => undefined, { final: true }));
    fire(p.edit(msg("m2"), "two", { final: true }));
    fire(p.edit(msg("m3"), "three", { final: true }));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(empty.settled).toBe(true);
    // Two a minute: both go, none waits for the window to move on.
    expect(s.calls.map((c) => [c.payload, c.t - 1_000_000])).toEqual([
      ["two", 0],
      ["three", 0],
    ]);
  });

  it("does not hold a final back by the interval, but waits for the in-flight edit", async () => {
    const s = fakeSender(() => ({ latencyMs: 300 }));
    const p = pacer(s.send);
    fire(p.edit(msg("m1"), "interim"));
    await vi.advanceTimersByTimeAsync(100);
    const final = track(p.edit(msg("m1"), "final", { final: true }));
    await vi.advanceTimersByTimeAsync(200); // interim lands at 300: the final starts then
    expect(s.calls.map((c) => [c.payload, c.t - 1_000_000])).toEqual([
      ["interim", 0],
      ["final", 300],
    ]);
    await vi.advanceTimersByTimeAsync(300);
    expect(final).toEqual({ settled: true });
  });

  it("ignores interim edits after a final has landed, until a new final is given", async () => {
    const s = fakeSender();
    const sent: boolean[] = [];
    const p = pacer(s.send, { onSent: (_t, final) => sent.push(final) });
    await p.edit(msg("m1"), "done", { final: true });
    const late = track(p.edit(msg("m1"), "late interim"));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(late).toEqual({ settled: true });
    expect(s.calls.map((c) => c.payload)).toEqual(["done"]);
    const again = p.edit(msg("m1"), "done again", { final: true });
    await vi.advanceTimersByTimeAsync(0);
    await again;
    expect(s.calls.map((c) => c.payload)).toEqual(["done", "done again"]);
    expect(sent).toEqual([true, true]);
  });

  it("lets an interim given while a final is pending follow that final", async () => {
    const s = fakeSender(() => ({ latencyMs: 500 }));
    const p = pacer(s.send);
    fire(p.edit(msg("m1"), "interim 1"));
    await tick();
    const final = track(p.edit(msg("m1"), "final", { final: true }));
    const stale = track(p.edit(msg("m1"), "interim 2"));
    await vi.advanceTimersByTimeAsync(400);
    expect(stale.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(s.calls.map((c) => c.payload)).toEqual(["interim 1", "final"]);
    expect(final).toEqual({ settled: true });
    expect(stale).toEqual({ settled: true });
  });
});

describe("Pacer: the workspace budget", () => {
  it("sends finals first, oldest first, then interims", async () => {
    const s = fakeSender();
    const p = pacer(s.send, { updatesPerMinute: 60, burst: 1 });
    fire(p.edit(msg("warmup"), "w")); // takes the only token
    await tick();
    fire(p.edit(msg("a"), "a interim"));
    fire(p.edit(msg("b"), "b interim"));
    await vi.advanceTimersByTimeAsync(100);
    fire(p.edit(msg("c"), "c final", { final: true }));
    await vi.advanceTimersByTimeAsync(100);
    fire(p.edit(msg("d"), "d final", { final: true }));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.calls.map((c) => c.payload)).toEqual([
      "w",
      "c final",
      "d final",
      "a interim",
      "b interim",
    ]);
    // One token a second: the budget, not the order, sets the pace.
    expect(s.calls.map((c) => c.t - 1_000_000)).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
  });

  it("gives the next token to the least recently edited message, not the oldest request", async () => {
    const s = fakeSender();
    const p = pacer(s.send, { updatesPerMinute: 60, burst: 1 });
    fire(p.edit(msg("a"), "a1"));
    fire(p.edit(msg("b"), "b1"));
    await vi.advanceTimersByTimeAsync(1_100);
    fire(p.edit(msg("b"), "b2")); // asked first, but b was edited at 1 s
    await vi.advanceTimersByTimeAsync(400);
    fire(p.edit(msg("a"), "a2")); // asked later, but a was last edited at 0 s
    await vi.advanceTimersByTimeAsync(5_000);
    expect(s.calls.map((c) => [c.payload, c.t - 1_000_000])).toEqual([
      ["a1", 0],
      ["b1", 1_000],
      ["a2", 2_000],
      ["b2", 3_000],
    ]);
  });

  it("never exceeds updatesPerMinute in any minute, paces interim edits, and keeps one timer", async () => {
    const s = fakeSender();
    const p = pacer(s.send); // defaults: 47 in any 61 s; interim edits 23/min after 5 at once
    let maxTimers = 0;
    for (let step = 0; step < 3_000; step++) {
      for (let m = 0; m < 10; m++) fire(p.edit(msg(`m${m}`), `step ${step}`));
      await vi.advanceTimersByTimeAsync(100);
      maxTimers = Math.max(maxTimers, vi.getTimerCount());
    }
    const times = s.calls.map((c) => c.t);
    let maxInWindow = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while ((times[i] ?? 0) - (times[j] ?? 0) >= 61_000) j++;
      maxInWindow = Math.max(maxInWindow, i - j + 1);
    }
    // Interim edits only: their pace (5 + 23 a minute) leaves finals half the window of 47.
    expect(maxInWindow).toBeLessThanOrEqual(28);
    expect(maxInWindow).toBeGreaterThanOrEqual(27);
    expect(s.calls.length).toBeGreaterThanOrEqual(5 + 23 * 4.9);
    expect(maxTimers).toBe(1);
  });

  it("leaves the minute's edits room for the finals still to come, and lets interims go once they are given", async () => {
    const s = fakeSender();
    const p = pacer(s.send, { updatesPerMinute: 8 });
    // Seven answers being written, each to end with a final edit; three show words meanwhile.
    const pay = Array.from({ length: 7 }, () => p.owe("T1"));
    const write = async (messages: string[], seconds: number) => {
      for (let t = 0; t < seconds; t++) {
        for (const m of messages) fire(p.edit(msg(m), `${m} @${t}`));
        await vi.advanceTimersByTimeAsync(1_000);
      }
    };
    await write(["a", "b", "c"], 30);
    // Eight a minute, seven kept for the ends: one interim edit (their own pace allows three).
    expect(s.calls).toHaveLength(1);
    pay[0]?.();
    const end = track(p.edit(msg("a"), "a whole", { final: true }));
    await vi.advanceTimersByTimeAsync(0);
    expect(end.settled).toBe(true);
    expect(s.calls.at(-1)?.payload).toBe("a whole");
    // Every end given: the interims take their pace again.
    for (const paid of pay) paid();
    await write(["b", "c"], 30);
    expect(s.calls.length).toBeGreaterThanOrEqual(4);
  });

  it("shares the budget fairly: 50 streaming messages all get edits, evenly spread", async () => {
    const s = fakeSender();
    const p = pacer(s.send); // 23 interim edits a minute: each of 50 messages every ~130 s
    const duration = 10 * 60_000;
    for (let t = 0; t < duration; t += 200) {
      for (let m = 0; m < 50; m++) fire(p.edit(msg(`m${m}`), `m${m} @${t}`));
      await vi.advanceTimersByTimeAsync(200);
    }
    const counts = Array.from({ length: 50 }, (_, m) => s.of(`m${m}`).length);
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(4);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    for (let m = 0; m < 50; m++) {
      const times = s.of(`m${m}`).map((c) => c.t);
      expect((times[0] ?? Number.POSITIVE_INFINITY) - 1_000_000).toBeLessThan(120_000);
      for (let i = 1; i < times.length; i++) {
        // 50 messages sharing 23 interim edits a minute: a turn every ~130 s, never much later.
        expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeLessThanOrEqual(131_500);
      }
    }
  });
});

describe("Pacer: the workspace's budget", () => {
  it("is taken for each final ready and one interim edit, as the interim pace lets one go at a time", async () => {
    // What the scheduler asks the workspace's window for: a budget kept in a database takes
    // that many slots at once, and those no call spends hold other replicas back meanwhile.
    const asked: number[] = [];
    const scheduler = new CallScheduler({
      random: () => 0.5,
      allowances: (scope, rules) => {
        const local = localAllowances(scope, rules);
        if (scope.method !== "chat.update" || scope.lane !== undefined) return local;
        return {
          readyAt: (now, ahead) => local.readyAt(now, ahead),
          tryTake: (now, place) => {
            asked.push(place?.ready ?? 1);
            return local.tryTake(now, place);
          },
        };
      },
    });
    const s = fakeSender();
    const p = new Pacer<string>(s.send, { scheduler, updatesPerMinute: 40 });
    pacers.push(p);
    for (const m of ["m1", "m2", "m3", "m4", "m5"]) fire(p.edit(msg(m), "some words"));
    for (const m of ["f1", "f2"]) fire(p.edit(msg(m), "the whole answer", { final: true }));
    await tick();
    expect(asked[0]).toBe(2 + 1);
    expect(s.calls.length).toBeGreaterThanOrEqual(3);
  });
});
