import {
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
} from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  PostGate,
  PostGateError,
  type PostGateOptions,
} from "../../../src/slack/calls/post-gate.js";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";

const T0 = 1_000_000;

interface Post {
  t: number;
  channel: string;
  label: string;
  attempt: number;
}

/** A fake `chat.postMessage`: records each call; `outcome` may delay it or make it throw. */
function fakeSlack(
  outcome: (post: Post, index: number) => { latencyMs?: number; error?: unknown } = () => ({}),
) {
  const posts: Post[] = [];
  const live = new Map<string, number>();
  let maxLivePerChannel = 0;
  const call = (channel: string, label: string) => async (attempt: number) => {
    const post = { t: Date.now() - T0, channel, label, attempt };
    const index = posts.push(post) - 1;
    live.set(channel, (live.get(channel) ?? 0) + 1);
    maxLivePerChannel = Math.max(maxLivePerChannel, live.get(channel) ?? 0);
    try {
      const { latencyMs = 0, error } = outcome(post, index);
      if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
      if (error !== undefined) throw error;
      return { ts: `${label}.ts` };
    } finally {
      live.set(channel, (live.get(channel) ?? 1) - 1);
    }
  };
  return { posts, call, maxLivePerChannel: () => maxLivePerChannel };
}

function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

let gates: PostGate[] = [];
/** The system clock runs on vitest's fake timers; the backoff's jitter is fixed at half. */
function gate(options?: PostGateOptions): PostGate {
  const g = new PostGate({ scheduler: new CallScheduler({ random: () => 0.5 }), ...options });
  gates.push(g);
  return g;
}
const at = (channel: string, team = "T1") => ({ team, channel });

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  for (const g of gates) g.close();
  gates = [];
  vi.useRealTimers();
});

describe("PostGate pacing", () => {
  it("posts one at a time per channel, first in first out, and returns the call's value", async () => {
    const slack = fakeSlack(() => ({ latencyMs: 300 }));
    const g = gate();
    const results = ["a", "b", "c"].map((label) =>
      track(g.post(at("C1"), slack.call("C1", label))),
    );
    await vi.advanceTimersByTimeAsync(5_000);
    expect(slack.posts.map((p) => [p.label, p.t])).toEqual([
      ["a", 0],
      ["b", 300],
      ["c", 1_000], // burst of 2 spent: one a second
    ]);
    expect(slack.maxLivePerChannel()).toBe(1);
    expect(results.map((r) => r.value)).toEqual([{ ts: "a.ts" }, { ts: "b.ts" }, { ts: "c.ts" }]);
  });

  it("allows a burst of 2 per channel, then 1 per second; channels do not wait for each other", async () => {
    const slack = fakeSlack();
    const g = gate();
    for (const label of ["1", "2", "3", "4", "5"]) {
      void g.post(at("C1"), slack.call("C1", label));
      void g.post(at("C2"), slack.call("C2", label));
    }
    await vi.advanceTimersByTimeAsync(10_000);
    const times = (channel: string) =>
      slack.posts.filter((p) => p.channel === channel).map((p) => p.t);
    expect(times("C1")).toEqual([0, 0, 1_000, 2_000, 3_000]);
    expect(times("C2")).toEqual([0, 0, 1_000, 2_000, 3_000]);
    expect(slack.posts.filter((p) => p.channel === "C1").map((p) => p.label)).toEqual([
      "1",
      "2",
      "3",
      "4",
      "5",
    ]);
  });

  it("caps the workspace across channels, oldest post first, per workspace", async () => {
    const slack = fakeSlack();
    const g = gate({ workspacePerMinute: 60, workspaceBurst: 2 });
    for (const channel of ["C1", "C2", "C3", "C4"])
      void g.post(at(channel), slack.call(channel, channel));
    void g.post(at("D1", "T2"), slack.call("D1", "other team"));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(slack.posts.map((p) => [p.label, p.t])).toEqual([
      ["C1", 0],
      ["C2", 0],
      ["other team", 0],
      ["C3", 1_000],
      ["C4", 2_000],
    ]);
  });

  it("with a workspace window, lets the minute's allowance go at once, then waits for the window", async () => {
    const slack = fakeSlack();
    const g = gate({ workspacePerMinute: 3, workspaceWindow: true });
    for (const channel of ["C1", "C2", "C3", "C4", "C5"])
      void g.post(at(channel), slack.call(channel, channel));
    await vi.advanceTimersByTimeAsync(120_000);
    expect(slack.posts.map((p) => [p.label, p.t])).toEqual([
      ["C1", 0],
      ["C2", 0],
      ["C3", 0],
      // Slack's minute, and a second for the difference between sending and arriving.
      ["C4", 61_000],
      ["C5", 61_000],
    ]);
  });

  it("gives a free workspace token to the post that has waited longest, whatever its channel", async () => {
    const slack = fakeSlack();
    const g = gate({ workspacePerMinute: 60, workspaceBurst: 1 });
    void g.post(at("C1"), slack.call("C1", "a1"));
    void g.post(at("C2"), slack.call("C2", "b1"));
    void g.post(at("C1"), slack.call("C1", "a2"));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(slack.posts.map((p) => [p.label, p.t])).toEqual([
      ["a1", 0],
      ["b1", 1_000],
      ["a2", 2_000],
    ]);
  });
});

describe("PostGate withdrawals", () => {
  it("tells a call when few enough calls are ahead of it in its channel, or once it settles", async () => {
    const slack = fakeSlack();
    const g = gate();
    const near: string[] = [];
    const nearing = (label: string, within: number) => ({
      within,
      reached: () => near.push(`${label} at ${Date.now() - T0}`),
    });
    for (const label of ["1", "2", "3", "4"]) void g.post(at("C1"), slack.call("C1", label));
    void g.post(at("C1"), slack.call("C1", "5"), undefined, nearing("5", 1));
    void g.post(at("C1"), slack.call("C1", "6"), undefined, nearing("6", 0));
    await vi.advanceTimersByTimeAsync(0);
    expect(near).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    // Two went at once, then one a second: "5" has one ahead once "3" went, "6" none once "5" did.
    expect(near).toEqual(["5 at 1000", "6 at 3000"]);
    expect(slack.posts.map((p) => [p.label, p.t]).slice(4)).toEqual([
      ["5", 3_000],
      ["6", 4_000],
    ]);
  });

  it("takes a call out while it waits, never makes it, and leaves one that has gone", async () => {
    const slack = fakeSlack(() => ({ latencyMs: 500 }));
    const g = gate({ workspacePerMinute: 1, workspaceWindow: true });
    const gone = new AbortController();
    const waiting = new AbortController();
    const first = track(g.post(at("C1"), slack.call("C1", "first"), gone.signal));
    const second = track(g.post(at("C2"), slack.call("C2", "second"), waiting.signal));
    await vi.advanceTimersByTimeAsync(100);
    gone.abort();
    waiting.abort();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(slack.posts.map((p) => p.label)).toEqual(["first"]);
    expect(first).toMatchObject({ settled: true, value: { ts: "first.ts" } });
    expect(second.error).toBeInstanceOf(PostGateError);
    expect((second.error as PostGateError).reason).toBe("withdrawn");
  });
});

describe("PostGate failures", () => {
  it("pauses only the rate-limited channel for retryAfter, then repeats the same call", async () => {
    const slack = fakeSlack((post) =>
      post.channel === "C1" && post.attempt === 1 && post.label === "a"
        ? { error: new WebAPIRateLimitedError(3) }
        : {},
    );
    const hooked: number[] = [];
    const g = gate({ onRateLimited: (_t, ms) => hooked.push(ms) });
    const a = track(g.post(at("C1"), slack.call("C1", "a")));
    const b = track(g.post(at("C1"), slack.call("C1", "b")));
    for (const label of ["x", "y", "z"]) void g.post(at("C2"), slack.call("C2", label));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(
      slack.posts.filter((p) => p.channel === "C1").map((p) => [p.label, p.attempt, p.t]),
    ).toEqual([
      ["a", 1, 0],
      ["a", 2, 3_000],
      ["b", 1, 3_000],
    ]);
    expect(slack.posts.filter((p) => p.channel === "C2").map((p) => p.t)).toEqual([0, 0, 1_000]);
    expect(a.value).toEqual({ ts: "a.ts" });
    expect(b.value).toEqual({ ts: "b.ts" });
    expect(hooked).toEqual([3_000]);
    expect(g.stats()).toMatchObject({ queued: 0, inFlight: 0, posted: 5, rateLimited: 1 });
  });

  it("gives up after rateLimitRetries 429s", async () => {
    const limited = new WebAPIRateLimitedError(1);
    const slack = fakeSlack(() => ({ error: limited }));
    const g = gate({ rateLimitRetries: 2 });
    const a = track(g.post(at("C1"), slack.call("C1", "a")));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(slack.posts.map((p) => p.t)).toEqual([0, 1_000, 2_000]);
    expect(a.error).toBe(limited);
  });

  it("retries 5xx and network errors with backoff up to `retries`, then rejects", async () => {
    const error = new WebAPIHTTPError(503, "Service Unavailable", {}, "");
    const slack = fakeSlack(() => ({ error }));
    const g = gate({ retries: 3, retryDelayMs: 1_000 });
    const a = track(g.post(at("C1"), slack.call("C1", "a")));
    await vi.advanceTimersByTimeAsync(30_000);
    // Full jitter at half: half of 1 s, 2 s, 4 s.
    expect(slack.posts.map((p) => [p.attempt, p.t])).toEqual([
      [1, 0],
      [2, 500],
      [3, 1_500],
      [4, 3_500],
    ]);
    expect(a.error).toBe(error);
  });

  it("succeeds after a network error", async () => {
    const slack = fakeSlack((_p, i) =>
      i === 0 ? { error: new WebAPIRequestError(new Error("ETIMEDOUT")) } : {},
    );
    const g = gate();
    await vi.advanceTimersByTimeAsync(0);
    const a = track(g.post(at("C1"), slack.call("C1", "a")));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(slack.posts.map((p) => [p.attempt, p.t])).toEqual([
      [1, 0],
      [2, 500],
    ]);
    expect(a.value).toEqual({ ts: "a.ts" });
  });

  it("does not retry permanent errors, and the channel's queue moves on", async () => {
    const gone = new WebAPIPlatformError({ ok: false, error: "channel_not_found" });
    const slack = fakeSlack((p) => (p.label === "a" ? { error: gone } : {}));
    const g = gate();
    const a = track(g.post(at("C1"), slack.call("C1", "a")));
    const b = track(g.post(at("C1"), slack.call("C1", "b")));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(slack.posts.map((p) => p.label)).toEqual(["a", "b"]);
    expect(a.error).toBe(gone);
    expect(b.value).toEqual({ ts: "b.ts" });
  });

  it("close rejects queued posts, lets the one in flight finish and clears its timers", async () => {
    const slack = fakeSlack(() => ({ latencyMs: 200 }));
    const g = gate({ burst: 1 });
    const a = track(g.post(at("C1"), slack.call("C1", "a")));
    const b = track(g.post(at("C1"), slack.call("C1", "b")));
    await vi.advanceTimersByTimeAsync(0);
    g.close();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(a.value).toEqual({ ts: "a.ts" });
    expect(b.error).toBeInstanceOf(PostGateError);
    expect(slack.posts.map((p) => p.label)).toEqual(["a"]);
    expect(vi.getTimerCount()).toBe(0);
    await expect(g.post(at("C1"), slack.call("C1", "c"))).rejects.toBeInstanceOf(PostGateError);
  });
});
