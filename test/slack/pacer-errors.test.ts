import {
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
} from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type EditTarget,
  Pacer,
  PacerError,
  type PacerOptions,
} from "../../src/slack/calls/pacer.js";
import { CallScheduler } from "../../src/slack/calls/scheduler.js";
import { fakeSender, fire, msg, tick, track } from "../support/fake-edit-sender.js";

const T0 = 1_000_000;
const platform = (error: string) => new WebAPIPlatformError({ ok: false, error });
const http500 = () => new WebAPIHTTPError(500, "Internal Server Error", {}, "");

let pacers: Pacer<string>[] = [];
/** The system clock runs on vitest's fake timers; the backoff's jitter is fixed at half. */
function pacer(send: (t: EditTarget, p: string) => Promise<void>, options?: PacerOptions) {
  const scheduler = new CallScheduler({ random: () => 0.5 });
  const p = new Pacer<string>(send, { scheduler, ...options });
  pacers.push(p);
  return p;
}

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  for (const p of pacers) p.close();
  pacers = [];
  vi.useRealTimers();
});

describe("Pacer: 429", () => {
  it("pauses only the rate-limited workspace, for retryAfter, then sends the latest payload", async () => {
    let limited = false;
    const s = fakeSender((call) => {
      if (call.target.team === "T1" && !limited) {
        limited = true;
        return { error: new WebAPIRateLimitedError(5) };
      }
      return {};
    });
    const hooked: [string, number][] = [];
    const p = pacer(s.send, {
      updatesPerMinute: 600,
      burst: 10,
      onRateLimited: (target, ms) => hooked.push([target.ts, ms]),
    });
    for (let t = 0; t < 8_000; t += 500) {
      fire(p.edit(msg("a", "T1"), `a ${t}`));
      fire(p.edit(msg("b", "T1"), `b ${t}`));
      fire(p.edit(msg("x", "T2"), `x ${t}`));
      await vi.advanceTimersByTimeAsync(500);
    }
    const t1 = s.calls.filter((c) => c.target.team === "T1").map((c) => [c.target.ts, c.t - T0]);
    // a was rate-limited at 0 (b went in the same instant); nothing of T1 until 5 s later.
    expect(t1.slice(0, 4)).toEqual([
      ["a", 0],
      ["b", 0],
      ["a", 5_000],
      ["b", 5_000],
    ]);
    expect(s.of("a").find((c) => c.t === T0 + 5_000)?.payload).toBe("a 4500");
    const t2During = s.calls.filter((c) => c.target.team === "T2" && c.t - T0 < 5_000);
    expect(t2During.map((c) => c.t - T0)).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
    expect(hooked).toEqual([["a", 5_000]]);
    expect(p.stats().rateLimited).toBe(1);
  });

  it("re-sends a rate-limited final that nothing superseded, without counting it as a failure", async () => {
    const s = fakeSender((_call, index) =>
      index < 2 ? { error: new WebAPIRateLimitedError(2) } : {},
    );
    const p = pacer(s.send, { finalRetries: 0 });
    const final = track(p.edit(msg("m"), "done", { final: true }));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.calls.map((c) => [c.payload, c.t - T0])).toEqual([
      ["done", 0],
      ["done", 2_000],
      ["done", 4_000],
    ]);
    expect(final).toEqual({ settled: true });
  });
});

describe("Pacer: other failures", () => {
  it("retries a final on 500 with exponential backoff, then rejects after finalRetries", async () => {
    const error = http500();
    const s = fakeSender(() => ({ error }));
    const p = pacer(s.send, { finalRetries: 3, retryDelayMs: 1_000 });
    const final = track(p.edit(msg("m"), "done", { final: true }));
    await vi.advanceTimersByTimeAsync(60_000);
    // Full jitter at half: half of 1 s, 2 s, 4 s.
    expect(s.calls.map((c) => c.t - T0)).toEqual([0, 500, 1_500, 3_500]);
    expect(final).toEqual({ settled: true, error });
  });

  it("delivers a final after transient network and platform errors", async () => {
    const errors = [new WebAPIRequestError(new Error("ECONNRESET")), platform("internal_error")];
    const s = fakeSender((_call, index) => ({ error: errors[index] }));
    const p = pacer(s.send);
    const final = track(p.edit(msg("m"), "done", { final: true }));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.calls.map((c) => c.t - T0)).toEqual([0, 500, 1_500]);
    expect(final).toEqual({ settled: true });
    expect(p.stats()).toMatchObject({ sent: 1, pending: 0, inFlight: 0 });
  });

  it.each([
    "message_not_found",
    "msg_too_long",
    "invalid_blocks",
    "channel_not_found",
    "not_in_channel",
    "is_archived",
    "invalid_auth",
  ])("does not retry a final refused with %s", async (reason) => {
    const error = platform(reason);
    const s = fakeSender(() => ({ error }));
    const p = pacer(s.send);
    const final = track(p.edit(msg("m"), "done", { final: true }));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(s.calls).toHaveLength(1);
    expect(final).toEqual({ settled: true, error });
  });

  it("does not retry a failed interim; its promise resolves when a later edit lands", async () => {
    const s = fakeSender((_call, index) => (index === 0 ? { error: http500() } : {}));
    const p = pacer(s.send);
    const first = track(p.edit(msg("m"), "v1"));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.calls).toHaveLength(1);
    expect(first.settled).toBe(false);
    const second = track(p.edit(msg("m"), "v2"));
    await tick();
    expect(s.calls.map((c) => c.payload)).toEqual(["v1", "v2"]);
    expect(first).toEqual({ settled: true });
    expect(second).toEqual({ settled: true });
  });

  it("rejects a failed interim's promise when the message's final fails for good", async () => {
    const gone = platform("message_not_found");
    const s = fakeSender(() => ({ error: gone }));
    const p = pacer(s.send);
    const interim = track(p.edit(msg("m"), "v1"));
    await tick();
    const final = track(p.edit(msg("m"), "done", { final: true }));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(s.calls.map((c) => c.payload)).toEqual(["v1", "done"]);
    expect(interim).toEqual({ settled: true, error: gone });
    expect(final).toEqual({ settled: true, error: gone });
  });

  it("rejects a failed interim's promise when no edit of its message follows for idleRetentionMs", async () => {
    const s = fakeSender((_call, index) => (index === 0 ? { error: http500() } : {}));
    const p = pacer(s.send, { idleRetentionMs: 60_000 });
    const lost = track(p.edit(msg("m"), "v1"));
    await vi.advanceTimersByTimeAsync(30_000);
    fire(p.edit(msg("other"), "x"));
    await tick();
    expect(lost.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(31_000);
    fire(p.edit(msg("other"), "y"));
    await tick();
    expect((lost.error as PacerError).reason).toBe("forgotten");
  });

  it("lets a failed final's callers follow a newer final given meanwhile", async () => {
    const s = fakeSender((_call, index) =>
      index === 0 ? { latencyMs: 500, error: platform("msg_too_long") } : {},
    );
    const p = pacer(s.send);
    const first = track(p.edit(msg("m"), "too long", { final: true }));
    await vi.advanceTimersByTimeAsync(100);
    const second = track(p.edit(msg("m"), "shorter", { final: true }));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(s.calls.map((c) => [c.payload, c.t - T0])).toEqual([
      ["too long", 0],
      ["shorter", 500],
    ]);
    expect(first).toEqual({ settled: true });
    expect(second).toEqual({ settled: true });
  });

  it("keeps pacing when a metrics hook throws", async () => {
    const s = fakeSender();
    const p = pacer(s.send, {
      onSent: () => {
        throw new Error("metrics down");
      },
    });
    await expect(p.edit(msg("m"), "a", { final: true })).resolves.toBeUndefined();
    await expect(p.edit(msg("n"), "b", { final: true })).resolves.toBeUndefined();
  });
});

describe("Pacer: forget and close", () => {
  it("forget drops a pending interim (its promise rejects) but keeps a pending final", async () => {
    const s = fakeSender(() => ({ latencyMs: 1_000 }));
    const p = pacer(s.send);
    fire(p.edit(msg("a"), "a1"));
    fire(p.edit(msg("b"), "b1"));
    await tick();
    const a2 = track(p.edit(msg("a"), "a2"));
    const b2 = track(p.edit(msg("b"), "b2", { final: true }));
    p.forget(msg("a"));
    p.forget(msg("b"));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(s.calls.map((c) => c.payload)).toEqual(["a1", "b1", "b2"]);
    expect(a2.error).toBeInstanceOf(PacerError);
    expect((a2.error as PacerError).reason).toBe("forgotten");
    expect(b2).toEqual({ settled: true });
  });

  it("close clears the timers and rejects pending edits; later edits reject at once", async () => {
    const s = fakeSender();
    const p = pacer(s.send, { updatesPerMinute: 60, burst: 1 });
    fire(p.edit(msg("a"), "a"));
    await tick();
    const waiting = track(p.edit(msg("b"), "b", { final: true }));
    await tick();
    expect(vi.getTimerCount()).toBe(1);
    p.close();
    await tick();
    expect(vi.getTimerCount()).toBe(0);
    expect((waiting.error as PacerError).reason).toBe("closed");
    await expect(p.edit(msg("c"), "c")).rejects.toBeInstanceOf(PacerError);
    expect(s.calls.map((c) => c.payload)).toEqual(["a"]);
  });

  it("rejects invalid budgets at construction", () => {
    expect(() => new Pacer(async () => undefined, { updatesPerMinute: 0 })).toThrow(RangeError);
    expect(() => new Pacer(async () => undefined, { burst: 0 })).toThrow(RangeError);
  });
});
