import { beforeEach, describe, expect, it } from "vitest";
import {
  BudgetCanceled,
  type BudgetOptions,
  type BudgetTicket,
  type QueuePosition,
  ServiceBudget,
} from "../../../src/budgets/service/budget.js";
import { ManualClock } from "../../support/manual-clock.js";

const WINDOW = 60_000;
const T0 = 1_000_000;

let clock: ManualClock;
beforeEach(() => {
  clock = new ManualClock(T0);
});

/** A budget on the test's clock. */
const budgetWith = (options: Omit<BudgetOptions, "clock"> = {}) =>
  new ServiceBudget({ ...options, clock });
/** Lets promise continuations (ready.then) run without moving the clock. */
const settle = () => clock.advance(0);
const elapsed = () => clock.now() - T0;

function track(tickets: Record<string, BudgetTicket>): string[] {
  const order: string[] = [];
  for (const [name, ticket] of Object.entries(tickets)) {
    ticket.ready.then(
      () => order.push(name),
      () => {},
    );
  }
  return order;
}

async function isReady(ticket: BudgetTicket): Promise<boolean> {
  let ready = false;
  ticket.ready.then(
    () => {
      ready = true;
    },
    () => {},
  );
  await settle();
  return ready;
}

describe("ServiceBudget: order", () => {
  it("serves waiting tickets FIFO as slots free a window after release", async () => {
    const budget = budgetWith({ runStartsPerMinute: 2, marginMs: 0 });
    const t = {
      a: budget.take("u", "run_start"),
      b: budget.take("u", "run_start"),
      c: budget.take("u", "run_start"),
      d: budget.take("u", "run_start"),
      e: budget.take("u", "run_start"),
    };
    const order = track(t);
    await settle();
    expect(order).toEqual(["a", "b"]);
    expect([t.c.position(), t.d.position(), t.e.position()]).toEqual([0, 1, 2]);

    await clock.advance(5_000);
    t.b.release();
    t.a.release();
    await clock.advance(WINDOW - 1);
    expect(order).toEqual(["a", "b"]);
    await clock.advance(1);
    expect(order).toEqual(["a", "b", "c", "d"]);
    expect(elapsed()).toBe(5_000 + WINDOW);
    expect(t.e.position()).toBe(0);
  });

  it("serves parties round-robin, FIFO within a party, and position() follows that order", async () => {
    const budget = budgetWith({ requestsPerMinute: 1, marginMs: 0 });
    const blocker = budget.take("u", "request");
    const t = {
      a1: budget.take("u", "request", { party: "alice" }),
      a2: budget.take("u", "request", { party: "alice" }),
      a3: budget.take("u", "request", { party: "alice" }),
      b1: budget.take("u", "request", { party: "bob" }),
      c1: budget.take("u", "request", { party: "carol" }),
      c2: budget.take("u", "request", { party: "carol" }),
    };
    const expected = ["a1", "b1", "c1", "a2", "c2", "a3"];
    const positions = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.position()]));
    expect(positions).toEqual({ a1: 0, b1: 1, c1: 2, a2: 3, c2: 4, a3: 5 });

    const order = track(t);
    const all: Record<string, BudgetTicket> = { blocker, ...t };
    let current = "blocker";
    for (const name of expected) {
      all[current]?.release();
      await clock.advance(WINDOW);
      expect(order.at(-1)).toBe(name);
      current = name;
    }
    expect(order).toEqual(expected);
  });

  it("puts a newly arrived party ahead of a flooding party's backlog", async () => {
    const budget = budgetWith({ requestsPerMinute: 1 });
    budget.take("u", "request", { party: "flood" });
    const flood = Array.from({ length: 5 }, () => budget.take("u", "request", { party: "flood" }));
    const changes: number[] = [];
    flood[1]?.onChange((p) => changes.push(p.position));
    const quiet = budget.take("u", "request", { party: "quiet" });
    expect(quiet.position()).toBe(1);
    expect(flood.map((f) => f.position())).toEqual([0, 2, 3, 4, 5]);
    expect(changes).toEqual([2]);
  });

  it("with a single party it is plain FIFO", async () => {
    const budget = budgetWith({ requestsPerMinute: 1 });
    budget.take("u", "request");
    const tickets = Array.from({ length: 4 }, () => budget.take("u", "request", { party: "p" }));
    expect(tickets.map((t) => t.position())).toEqual([0, 1, 2, 3]);
  });

  it("keeps users and kinds independent", async () => {
    const budget = budgetWith({ runStartsPerMinute: 1, requestsPerMinute: 1 });
    budget.take("u1", "run_start");
    expect(await isReady(budget.take("u1", "request"))).toBe(true);
    expect(await isReady(budget.take("u2", "run_start"))).toBe(true);
    expect(await isReady(budget.take("u1", "run_start"))).toBe(false);
  });
});

describe("ServiceBudget: figures", () => {
  it("estimates waits from the window log, counting unreleased slots as freeing a window from now", async () => {
    const budget = budgetWith({ runStartsPerMinute: 2, marginMs: 0 });
    const a = budget.take("u", "run_start");
    const b = budget.take("u", "run_start");
    const c = budget.take("u", "run_start");
    const d = budget.take("u", "run_start");
    const e = budget.take("u", "run_start");
    expect([a.position(), a.expectedWaitMs()]).toEqual([0, 0]);
    expect([c.position(), c.expectedWaitMs()]).toEqual([0, WINDOW]);
    expect([d.position(), d.expectedWaitMs()]).toEqual([1, WINDOW]);
    // e needs a slot that c or d frees again: a second window.
    expect([e.position(), e.expectedWaitMs()]).toEqual([2, 2 * WINDOW]);

    await clock.advance(1_000);
    a.release();
    await clock.advance(9_000);
    // a frees at 61 s; b is still out, so it frees no earlier than 10 s + 60 s.
    expect(c.expectedWaitMs()).toBe(51_000);
    expect(d.expectedWaitMs()).toBe(60_000);
    expect(e.expectedWaitMs()).toBe(51_000 + WINDOW);
    b.release();
    expect(d.expectedWaitMs()).toBe(60_000);
  });

  it("reports changes through onChange and stops after unsubscribe", async () => {
    const budget = budgetWith({ runStartsPerMinute: 1, marginMs: 0 });
    const a = budget.take("u", "run_start");
    const b = budget.take("u", "run_start");
    const c = budget.take("u", "run_start");
    const seenB: QueuePosition[] = [];
    const seenC: QueuePosition[] = [];
    b.onChange((p) => seenB.push(p));
    const off = c.onChange((p) => seenC.push(p));

    await clock.advance(2_000);
    a.release();
    expect(seenB).toEqual([{ position: 0, expectedWaitMs: WINDOW }]);
    expect(seenC).toEqual([{ position: 1, expectedWaitMs: 2 * WINDOW }]);

    off();
    await clock.advance(WINDOW);
    expect(seenB.at(-1)).toEqual({ position: 0, expectedWaitMs: 0 });
    expect(b.position()).toBe(0);
    expect(seenC).toHaveLength(1);
    expect(c.position()).toBe(0);
  });

  it("snapshot counts queued, in-flight and window use per (user, kind)", async () => {
    const budget = budgetWith({ runStartsPerMinute: 2, marginMs: 0 });
    const a = budget.take("u", "run_start");
    budget.take("u", "run_start");
    budget.take("u", "run_start");
    budget.take("u", "request").release();
    a.release();
    a.release(); // idempotent: still one slot in the log
    expect(budget.snapshot()).toEqual([
      { user: "u", kind: "run_start", queued: 1, inFlight: 1, usedInWindow: 2 },
      { user: "u", kind: "request", queued: 0, inFlight: 0, usedInWindow: 1 },
    ]);
    await clock.advance(WINDOW);
    expect(budget.snapshot()).toEqual([
      { user: "u", kind: "run_start", queued: 0, inFlight: 2, usedInWindow: 2 },
      { user: "u", kind: "request", queued: 0, inFlight: 0, usedInWindow: 0 },
    ]);
  });

  it("rejects nonsensical options", () => {
    expect(() => budgetWith({ runStartsPerMinute: 0 })).toThrow(RangeError);
    expect(() => budgetWith({ requestsPerMinute: 1.5 })).toThrow(RangeError);
    expect(() => budgetWith({ marginMs: -1 })).toThrow(RangeError);
  });
});

describe("ServiceBudget: cancel and abort", () => {
  it("cancel removes a waiting ticket, rejects it and moves the others up", async () => {
    const budget = budgetWith({ requestsPerMinute: 1, marginMs: 0 });
    const a = budget.take("u", "request");
    const b = budget.take("u", "request");
    const c = budget.take("u", "request");
    const seen: QueuePosition[] = [];
    c.onChange((p) => seen.push(p));
    b.cancel();
    await expect(b.ready).rejects.toBeInstanceOf(BudgetCanceled);
    expect(b.position()).toBe(0);
    expect(seen).toEqual([{ position: 0, expectedWaitMs: WINDOW }]);
    a.release();
    await clock.advance(WINDOW);
    expect(await isReady(c)).toBe(true);
    expect(budget.snapshot()[0]).toMatchObject({ queued: 0, inFlight: 1 });
  });

  it("an aborted signal cancels a waiting ticket; one aborted up front never joins", async () => {
    const budget = budgetWith({ requestsPerMinute: 1 });
    budget.take("u", "request");
    const controller = new AbortController();
    const waiting = budget.take("u", "request", { signal: controller.signal });
    const behind = budget.take("u", "request");
    expect(behind.position()).toBe(1);
    controller.abort();
    await expect(waiting.ready).rejects.toBeInstanceOf(BudgetCanceled);
    expect(behind.position()).toBe(0);

    const seen: QueuePosition[] = [];
    behind.onChange((p) => seen.push(p));
    const late = budget.take("u", "request", { signal: AbortSignal.abort() });
    await expect(late.ready).rejects.toBeInstanceOf(BudgetCanceled);
    expect(budget.snapshot()[0]?.queued).toBe(1);
    expect(seen).toEqual([]);
  });

  it("cancel or abort after ready behaves like release: the slot stays taken a window", async () => {
    const budget = budgetWith({ requestsPerMinute: 2, marginMs: 0 });
    const controller = new AbortController();
    const a = budget.take("u", "request", { signal: controller.signal });
    const b = budget.take("u", "request");
    const c = budget.take("u", "request");
    const d = budget.take("u", "request");
    await clock.advance(1_000);
    controller.abort();
    await clock.advance(2_000);
    b.cancel();
    await expect(a.ready).resolves.toBeUndefined();
    await clock.advance(WINDOW - 2_000 - 1);
    expect(await isReady(c)).toBe(false);
    await clock.advance(1);
    expect(await isReady(c)).toBe(true);
    expect(await isReady(d)).toBe(false);
    await clock.advance(2_000);
    expect(await isReady(d)).toBe(true);
  });

  it("survives listeners that throw or cancel from inside the notification", async () => {
    const budget = budgetWith({ requestsPerMinute: 1, marginMs: 0 });
    const a = budget.take("u", "request");
    const b = budget.take("u", "request");
    const c = budget.take("u", "request");
    const d = budget.take("u", "request");
    await clock.advance(1_000);
    b.onChange(() => {
      throw new Error("listener bug");
    });
    c.onChange(() => c.cancel());
    const seenD: QueuePosition[] = [];
    d.onChange((p) => seenD.push(p));
    a.release();
    await expect(c.ready).rejects.toBeInstanceOf(BudgetCanceled);
    expect(d.position()).toBe(1);
    expect(seenD.at(-1)).toEqual({ position: 1, expectedWaitMs: 2 * WINDOW });
    await clock.advance(WINDOW);
    expect(await isReady(b)).toBe(true);
  });
});

describe("ServiceBudget: timing", () => {
  it("pauseUntil holds everyone of that (user, kind) back, even with free slots", async () => {
    const budget = budgetWith();
    budget.pauseUntil("u", "request", T0 + 5_000);
    const a = budget.take("u", "request");
    const other = budget.take("u", "run_start");
    expect(a.expectedWaitMs()).toBe(5_000);
    expect(await isReady(other)).toBe(true);
    await clock.advance(4_999);
    expect(await isReady(a)).toBe(false);
    // A shorter pause does not shorten the longer one.
    budget.pauseUntil("u", "request", T0 + 1_000);
    await clock.advance(1);
    expect(await isReady(a)).toBe(true);
  });

  it("frees a slot a window after release, not after ready, however long the request took", async () => {
    const budget = budgetWith({ runStartsPerMinute: 1 });
    const a = budget.take("u", "run_start");
    const b = budget.take("u", "run_start");
    await clock.advance(3 * WINDOW);
    expect(await isReady(b)).toBe(false);
    a.release();
    expect(b.expectedWaitMs()).toBe(WINDOW + 1);
    await clock.advance(WINDOW);
    expect(await isReady(b)).toBe(false);
    await clock.advance(1);
    expect(await isReady(b)).toBe(true);
  });

  it("keeps at most one timer per (user, kind), and none when nobody waits", async () => {
    const budget = budgetWith({ runStartsPerMinute: 2, requestsPerMinute: 2 });
    const tickets = [
      ...Array.from({ length: 30 }, () => budget.take("u", "run_start")),
      ...Array.from({ length: 30 }, () => budget.take("u", "request")),
    ];
    expect(clock.pending).toBe(0); // all slots in flight: only a release can help
    for (const t of [...tickets.slice(0, 2), ...tickets.slice(30, 32)]) t.release();
    await settle();
    expect(clock.pending).toBe(2);
    await clock.advance(WINDOW / 2);
    expect(clock.pending).toBe(2);
    await clock.advance(WINDOW / 2 + 1);
    // Four are ready now, each lane waits on its in-flight ones again.
    expect(budget.snapshot().map((s) => s.inFlight)).toEqual([2, 2]);
    expect(clock.pending).toBe(0);
  });
});

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The service's rule: at each arrival, at most `limit` arrivals in (arrival − window, arrival]. */
function violations(arrivals: number[], limit: number): number {
  const sorted = [...arrivals].sort((x, y) => x - y);
  let count = 0;
  for (const [i, at] of sorted.entries()) {
    const inWindow = sorted.slice(0, i + 1).filter((t) => t > at - WINDOW).length;
    if (inWindow > limit) count++;
  }
  return count;
}

describe("ServiceBudget: load", () => {
  it.each([
    { marginMs: 0, seed: 1, label: "no margin" },
    { marginMs: 1, seed: 2, label: "1 ms margin" },
    { marginMs: 1, seed: 3, label: "1 ms margin" },
  ])(
    "100 run starts never exceed 20 per sliding minute ($label, seed $seed)",
    async ({ marginMs, seed }) => {
      const budget = budgetWith({ marginMs });
      const rnd = random(seed);
      const arrivals: number[] = [];
      let finished = 0;
      let canceled = 0;
      const delay = () => {
        // A third of the requests arrive the instant they are ready or answer at once:
        // the edges of the rule are where a scheduler goes wrong.
        const r = rnd();
        return r < 0.33 ? 0 : Math.floor(rnd() * 4_000);
      };
      const start = (i: number) => {
        const controller = new AbortController();
        const ticket = budget.take("bot", "run_start", {
          party: `person-${i % 7}`,
          signal: controller.signal,
        });
        if (i % 25 === 24) clock.timer(30_000, () => controller.abort());
        ticket.ready.then(
          () => {
            clock.timer(delay(), () => {
              if (controller.signal.aborted) {
                canceled++; // aborted while ready: never sent, and abort released the slot
                return;
              }
              arrivals.push(clock.now());
              clock.timer(delay(), () => {
                ticket.release();
                finished++;
              });
            });
          },
          () => canceled++,
        );
      };
      for (let i = 0; i < 60; i++) start(i);
      // The rest trickle in while the first ones are being served.
      for (let i = 60; i < 100; i++) clock.timer(Math.floor(rnd() * 120_000), () => start(i));

      await clock.advance(8 * WINDOW);
      expect(finished + canceled).toBe(100);
      expect(canceled).toBeGreaterThan(0);
      expect(arrivals).toHaveLength(finished);
      expect(violations(arrivals, 20)).toBe(0);
      // And it is not merely slow: the window is filled again as soon as the rule allows.
      expect(Math.max(...arrivals) - T0).toBeLessThan(5 * (WINDOW + 8_000));
      expect(budget.snapshot()).toEqual([
        { user: "bot", kind: "run_start", queued: 0, inFlight: 0, usedInWindow: 0 },
      ]);
    },
  );

  it("the checker itself catches a scheduler that frees slots a window after ready", () => {
    // 20 ready at 0 s, arriving at 1 s; the 21st ready (and arriving) at 60 s.
    const arrivals = [...Array.from({ length: 20 }, () => 1_000), 60_000];
    expect(violations(arrivals, 20)).toBe(1);
    expect(violations([...Array.from({ length: 20 }, () => 1_000), 61_000], 20)).toBe(0);
  });
});
