import { WebAPIHTTPError, WebAPIRateLimitedError } from "@slack/web-api";
import { describe, expect, it } from "vitest";
import { localAllowances } from "../../../src/budgets/local-allowances.js";
import { CallScheduler, type Lane, type MethodBudget } from "../../../src/slack/calls/scheduler.js";
import type { CallFailure } from "../../../src/slack/web-api/call-failure.js";
import { ManualClock } from "../../support/manual-clock.js";

interface Outcome {
  latencyMs?: number;
  error?: unknown;
}

/**
 * The smallest lane: one slot with the latest payload; a failed call is given again (after
 * the backoff the lane asks for when it was transient). Records what the scheduler made it do.
 */
class TestLane implements Lane {
  readonly calls: { t: number; payload: string }[] = [];
  readonly results: string[] = [];
  live = 0;
  maxLive = 0;
  closed = false;
  abandonedWith: unknown;
  /** Times the scheduler asked readyAt, and expired. */
  asked = 0;
  expiryAsked = 0;
  /** expired() answers this. */
  gone = false;
  /** rank() answers this. */
  order = 0;
  private latest: string | undefined;
  private sending: string | undefined;
  private retries = 0;

  constructor(
    private readonly clock: ManualClock,
    private readonly outcome: (index: number) => Outcome = () => ({}),
  ) {}

  give(payload: string): void {
    this.latest = payload;
  }

  readyAt(): number | undefined {
    this.asked++;
    return this.latest === undefined ? undefined : Number.NEGATIVE_INFINITY;
  }

  rank(): number {
    return this.order;
  }

  async start(now: number): Promise<unknown> {
    const payload = this.latest as string;
    this.latest = undefined;
    this.sending = payload;
    const index = this.calls.push({ t: now, payload }) - 1;
    this.live++;
    this.maxLive = Math.max(this.maxLive, this.live);
    try {
      const { latencyMs = 0, error } = this.outcome(index);
      if (latencyMs > 0) await this.clock.sleep(latencyMs);
      if (error !== undefined) throw error;
      return payload;
    } finally {
      this.live--;
    }
  }

  landed(value: unknown): void {
    this.results.push(String(value));
  }

  failed(failure: CallFailure): number | undefined {
    this.latest ??= this.sending;
    return failure.kind === "transient" ? this.retries++ : undefined;
  }

  abandoned(error: unknown): void {
    this.abandonedWith = error;
  }

  expired(): boolean {
    this.expiryAsked++;
    return this.gone;
  }

  close(): void {
    this.closed = true;
    this.latest = undefined;
  }
}

function setup(random = () => 0.5) {
  const clock = new ManualClock();
  const t0 = clock.now();
  const scheduler = new CallScheduler({ clock, random });
  const method = (name: string, budget: Partial<MethodBudget<TestLane>> = {}) => {
    const lanes = scheduler.register<TestLane>(name, { perMinute: 60, burst: 1, ...budget });
    /** Gives `payload` to the lane `key` of `team` (made on first use). */
    return (team: string, key: string, payload: string, outcome?: (i: number) => Outcome) => {
      const lane = lanes.get(team, key, () => new TestLane(clock, outcome));
      lane.give(payload);
      lanes.wake(team);
      return lane;
    };
  };
  const times = (lane: TestLane) => lane.calls.map((c) => c.t - t0);
  return { clock, scheduler, method, times };
}

const limited = (seconds: number) => () => ({ error: new WebAPIRateLimitedError(seconds) });

describe("CallScheduler", () => {
  it("keeps a budget per method and workspace, on one alarm per workspace", async () => {
    const { clock, method, times } = setup();
    const edit = method("chat.update", { perMinute: 60, burst: 1 });
    const post = method("chat.postMessage", { perMinute: 60, burst: 2 });
    const edits = ["a", "b", "c"].map((k) => edit("T1", k, k));
    const posts = ["a", "b", "c"].map((k) => post("T1", k, k));
    const other = edit("T2", "a", "a");
    await clock.advance(0);
    expect(clock.pending).toBe(1);
    await clock.advance(5_000);
    expect(edits.map(times)).toEqual([[0], [1_000], [2_000]]);
    expect(posts.map(times)).toEqual([[0], [0], [1_000]]);
    expect(times(other)).toEqual([0]);
    expect(clock.pending).toBe(0);
  });

  it("keeps one call in flight per lane", async () => {
    const { clock, method, times } = setup();
    const edit = method("chat.update", { perMinute: 6_000, burst: 10 });
    const lane = edit("T1", "m", "v0", () => ({ latencyMs: 500 }));
    for (let i = 1; i <= 8; i++) {
      await clock.advance(250);
      edit("T1", "m", `v${i}`);
    }
    await clock.advance(1_000);
    expect(lane.maxLive).toBe(1);
    // Given every 250 ms, sent as each call lands: every other payload, never two at once.
    expect(times(lane)).toEqual([0, 500, 1_000, 1_500, 2_000, 2_500]);
    expect(lane.calls.at(-1)?.payload).toBe("v8");
  });

  it("asks a lane for its call only when it goes, so the latest payload wins", async () => {
    const { clock, method } = setup();
    const edit = method("chat.update", { perMinute: 60, burst: 1 });
    const lane = edit("T1", "m", "a");
    edit("T1", "m", "b");
    await clock.advance(0);
    for (const payload of ["c", "d", "e"]) edit("T1", "m", payload);
    await clock.advance(2_000);
    expect(lane.calls.map((c) => c.payload)).toEqual(["b", "e"]);
    expect(lane.results).toEqual(["b", "e"]);
  });

  it("pauses a workspace's method on a 429, not its other methods nor other workspaces", async () => {
    const { clock, method, times } = setup();
    const budget = { perMinute: 600, burst: 10 };
    const hooked: number[] = [];
    const edit = method("chat.update", { ...budget, onRateLimited: (_l, ms) => hooked.push(ms) });
    const post = method("chat.postMessage", budget);
    const a = edit("A", "a", "a0", (i) => (i === 0 ? limited(5)() : {}));
    await clock.advance(0);
    const b = edit("A", "b", "b0");
    const p = post("A", "C1", "p0");
    const other = edit("B", "x", "x0");
    await clock.advance(1_000);
    expect([times(a), times(b), times(p), times(other)]).toEqual([[0], [], [0], [0]]);
    await clock.advance(5_000);
    expect([times(a), times(b)]).toEqual([[0, 5_000], [5_000]]);
    expect(hooked).toEqual([5_000]);
  });

  it("pauses only the lane on a 429 when the method says so", async () => {
    const { clock, method, times } = setup();
    const post = method("chat.postMessage", { perMinute: 600, burst: 10, pauses: "lane" });
    const c1 = post("A", "C1", "a", (i) => (i === 0 ? limited(3)() : {}));
    await clock.advance(0);
    const c2 = post("A", "C2", "x");
    await clock.advance(5_000);
    expect([times(c1), times(c2)]).toEqual([[0, 3_000], [0]]);
  });

  it("backs a lane off after transient failures with the jittered exponential backoff", async () => {
    const { clock, method, times } = setup(() => 0.5);
    const edit = method("chat.update", { perMinute: 6_000, burst: 10, retryDelayMs: 1_000 });
    const error = new WebAPIHTTPError(500, "Internal Server Error", {}, "");
    const lane = edit("T1", "m", "v", (i) => (i < 7 ? { error } : {}));
    const steady = edit("T1", "n", "w");
    await clock.advance(120_000);
    // Half of 1, 2, 4, 8, 16 s, then of the 30 s cap.
    expect(times(lane)).toEqual([0, 500, 1_500, 3_500, 7_500, 15_500, 30_500, 45_500]);
    expect(lane.results).toEqual(["v"]);
    expect(times(steady)).toEqual([0]);
  });

  it("close tells the lanes, lets a call in flight settle, and leaves no timer", async () => {
    const { clock, scheduler, method } = setup();
    const edit = method("chat.update", { perMinute: 60, burst: 1 });
    const post = method("chat.postMessage", { perMinute: 60, burst: 1 });
    const error = new WebAPIHTTPError(500, "Internal Server Error", {}, "");
    const flying = edit("T1", "a", "a", () => ({ latencyMs: 500, error }));
    const waiting = edit("T1", "b", "b");
    const landing = post("T1", "C1", "p", () => ({ latencyMs: 500 }));
    await clock.advance(0);
    scheduler.close();
    await clock.advance(1_000);
    expect([flying.closed, waiting.closed, landing.closed]).toEqual([true, true, true]);
    expect(flying.abandonedWith).toBe(error);
    expect(landing.results).toEqual(["p"]);
    expect(waiting.calls).toEqual([]);
    expect(clock.pending).toBe(0);
    edit("T1", "c", "c");
    await clock.advance(5_000);
    expect(clock.pending).toBe(0);
  });

  it("closes one method and keeps the others going", async () => {
    const { clock, scheduler, method, times } = setup();
    const lanes = scheduler.register<TestLane>("chat.update", { perMinute: 60, burst: 1 });
    const post = method("chat.postMessage", { perMinute: 60, burst: 1 });
    const edit = lanes.get("T1", "a", () => new TestLane(clock));
    edit.give("a");
    lanes.wake("T1");
    lanes.close();
    expect(lanes.closed).toBe(true);
    const p = post("T1", "C1", "p");
    await clock.advance(0);
    post("T1", "C1", "q");
    await clock.advance(2_000);
    expect([edit.closed, edit.calls.length]).toEqual([true, 0]);
    expect(times(p)).toEqual([0, 1_000]);
  });

  it("says how long a method's next call would wait in a workspace, taking nothing", async () => {
    const { clock, scheduler, method } = setup();
    const start = method("chat.startStream", { perMinute: 20, burst: 2 });
    expect(scheduler.waitFor("T1", "chat.startStream")).toBe(0);
    start("T1", "a", "a");
    start("T1", "b", "b");
    await clock.advance(0);
    // The burst is spent: the next token comes 3 s later at 20 a minute.
    expect(scheduler.waitFor("T1", "chat.startStream")).toBe(3_000);
    expect(scheduler.waitFor("T1", "chat.startStream")).toBe(3_000);
    // A call already waiting goes first.
    start("T1", "c", "c");
    expect(scheduler.waitFor("T1", "chat.startStream")).toBe(6_000);
    expect(scheduler.waitFor("T2", "chat.startStream")).toBe(0);
    await clock.advance(3_000);
    expect(scheduler.waitFor("T1", "chat.startStream")).toBe(3_000);
    const limitedStart = start("T1", "d", "d", limited(30));
    await clock.advance(3_000);
    expect(limitedStart.calls).toHaveLength(1);
    expect(scheduler.waitFor("T1", "chat.startStream")).toBe(30_000);
    expect(() => scheduler.waitFor("T1", "chat.nothing")).toThrow();
  });

  it("withdraws from a budget it has no call ready for, so that other replicas' calls go", async () => {
    const clock = new ManualClock();
    const withdrawn: string[] = [];
    const scheduler = new CallScheduler({
      clock,
      allowances: (scope, rules) => {
        const local = localAllowances(scope, rules);
        return {
          readyAt: (now, ahead) => local.readyAt(now, ahead),
          tryTake: (now, place) => local.tryTake(now, place),
          withdraw: () => withdrawn.push(scope.method),
        };
      },
    });
    const lanes = scheduler.register<TestLane>("chat.update", { perMinute: 60, burst: 1 });
    const lane = lanes.get("T1", "m", () => new TestLane(clock));
    lane.give("a");
    lanes.wake("T1");
    await clock.advance(0);
    expect(lane.calls).toHaveLength(1);
    // Sent: nothing of this process waits for the budget any more.
    expect(withdrawn).toContain("chat.update");
    withdrawn.length = 0;
    lane.give("b");
    lanes.wake("T1");
    await clock.advance(0);
    // Waiting for its token: still in line.
    expect(withdrawn).toEqual([]);
    await clock.advance(1_000);
    expect(lane.calls.map((c) => c.payload)).toEqual(["a", "b"]);
    scheduler.close();
  });

  it("pumps only the method woken: another method's lanes are not asked until theirs is due", async () => {
    const { clock, scheduler, method, times } = setup();
    const post = method("chat.postMessage", { perMinute: 60, burst: 1 });
    // One goes at once, two wait for their tokens, a second apart.
    const waiting = ["C1", "C2", "C3"].map((c) => post("T1", c, c));
    await clock.advance(0);
    const asked = () => waiting.reduce((n, lane) => n + lane.asked, 0);
    const before = asked();
    const edits = scheduler.register<TestLane>("chat.update", { perMinute: 6_000, burst: 100 });
    const edit = edits.get("T1", "m", () => new TestLane(clock));
    for (let i = 0; i < 50; i++) {
      edit.give(`v${i}`);
      edits.wake("T1", "m");
      await clock.advance(1);
    }
    expect(edit.calls).toHaveLength(50);
    expect(asked()).toBe(before);
    // Due at their instants all the same.
    await clock.advance(3_000);
    expect(waiting.map(times)).toEqual([[0], [1_000], [2_000]]);
  });

  it("asks a lane with nothing to send again only once woken, by its key or with none", async () => {
    const { clock, scheduler } = setup();
    const lanes = scheduler.register<TestLane>("chat.update", { perMinute: 60_000, burst: 1_000 });
    const idle = Array.from({ length: 100 }, (_, i) =>
      lanes.get("T1", `idle${i}`, () => new TestLane(clock)),
    );
    const hot = lanes.get("T1", "hot", () => new TestLane(clock));
    // Made (and got) just now, each is asked once.
    lanes.wake("T1", "hot");
    await clock.advance(0);
    expect(idle.map((lane) => lane.asked)).toEqual(idle.map(() => 1));
    const askedIdle = () => idle.reduce((n, lane) => n + lane.asked, 0);
    const before = askedIdle();
    for (let i = 0; i < 200; i++) {
      hot.give(`v${i}`);
      lanes.wake("T1", "hot");
      await clock.advance(1);
    }
    expect(hot.calls).toHaveLength(200);
    // The hot lane: asked when woken, and once more after its call landed.
    expect(hot.asked).toBeLessThanOrEqual(2 * 200 + 1);
    expect(askedIdle()).toBe(before);
    // A lane given something without its key named: a wake without a key finds it.
    const quiet = idle[42] as TestLane;
    quiet.give("late");
    lanes.wake("T1");
    await clock.advance(0);
    expect(quiet.calls.map((c) => c.payload)).toEqual(["late"]);
  });

  it("of ready lanes of equal rank, sends the one made first, whatever order they were woken in", async () => {
    const { clock, scheduler, times } = setup();
    const lanes = scheduler.register<TestLane>("chat.update", { perMinute: 60, burst: 1 });
    const made = new Map(
      ["a", "b", "c", "d"].map((k) => [k, lanes.get("T1", k, () => new TestLane(clock))]),
    );
    // The token is spent: the four wait for the next ones together.
    const first = lanes.get("T1", "first", () => new TestLane(clock));
    first.give("first");
    lanes.wake("T1", "first");
    await clock.advance(0);
    for (const k of ["c", "a", "d", "b"]) {
      made.get(k)?.give(k);
      lanes.wake("T1", k);
    }
    // d ranks before the others.
    (made.get("d") as TestLane).order = -1;
    await clock.advance(5_000);
    expect([...made.values()].map(times)).toEqual([[2_000], [3_000], [4_000], [1_000]]);
  });

  it("looks for expired lanes at most once a second, and drops them", async () => {
    const { clock, scheduler } = setup();
    const lanes = scheduler.register<TestLane>("chat.update", { perMinute: 60_000, burst: 1_000 });
    const idle = Array.from({ length: 10 }, (_, i) =>
      lanes.get("T1", `idle${i}`, () => new TestLane(clock)),
    );
    const hot = lanes.get("T1", "hot", () => new TestLane(clock));
    for (let i = 0; i < 100; i++) {
      hot.give(`v${i}`);
      lanes.wake("T1", "hot");
      await clock.advance(5);
    }
    expect(hot.calls).toHaveLength(100);
    // 500 ms of wakes: one look.
    expect(idle.map((lane) => lane.expiryAsked)).toEqual(idle.map(() => 1));
    for (const lane of idle) lane.gone = true;
    await clock.advance(1_000);
    hot.give("again");
    lanes.wake("T1", "hot");
    await clock.advance(0);
    expect(idle.map((lane) => lane.expiryAsked)).toEqual(idle.map(() => 2));
    expect(lanes.find("T1", "idle0")).toBeUndefined();
    expect(lanes.find("T1", "hot")).toBe(hot);
  });

  it("refuses a second policy for a method and an impossible budget", () => {
    const { scheduler } = setup();
    scheduler.register("chat.update", { perMinute: 60, burst: 1 });
    expect(() => scheduler.register("chat.update", { perMinute: 60, burst: 1 })).toThrow();
    expect(() => scheduler.register("x", { perMinute: 0, burst: 1 })).toThrow(RangeError);
  });
});
