import { describe, expect, it } from "vitest";
import { type KnownPerson, UserDirectory } from "../../../src/slack/admission/user-directory.js";

/** A users.info whose calls the test answers one by one; it counts what is in flight. */
function heldLookups() {
  const pending = new Map<string, (person: KnownPerson | Error) => void>();
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const lookup = (id: string) =>
    new Promise<KnownPerson>((resolve, reject) => {
      calls.push(id);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      pending.set(id, (answer) => {
        inFlight--;
        pending.delete(id);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      });
    });
  return {
    lookup,
    calls,
    maxInFlight: () => maxInFlight,
    answer: (id: string, person: KnownPerson | Error = { displayName: id }) =>
      pending.get(id)?.(person),
    waiting: () => [...pending.keys()],
  };
}

/** Lets the directory's promise callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("users.info lookups", () => {
  it("keep at most maxConcurrent calls in flight; the rest wait their turn in order", async () => {
    const slack = heldLookups();
    const directory = new UserDirectory({ lookup: slack.lookup, maxConcurrent: 2 });
    const done = directory.resolve(["U1", "U2", "U3", "U4", "U5"]);
    await settle();
    expect(slack.calls).toEqual(["U1", "U2"]);
    expect(directory.load).toEqual({ running: 2, waiting: 3 });
    slack.answer("U2");
    await settle();
    expect(slack.calls).toEqual(["U1", "U2", "U3"]);
    for (const id of ["U1", "U3", "U4", "U5"]) {
      slack.answer(id);
      await settle();
    }
    await done;
    expect(slack.calls).toEqual(["U1", "U2", "U3", "U4", "U5"]);
    expect(slack.maxInFlight()).toBe(2);
    expect(directory.name("U5")).toBe("U5");
  });

  it("fail at once past maxWaiting, and are tried again by the next message", async () => {
    const slack = heldLookups();
    const directory = new UserDirectory({ lookup: slack.lookup, maxConcurrent: 1, maxWaiting: 1 });
    const first = directory.resolve(["U1", "U2", "U3"]);
    await settle();
    // U3 found the queue full: no call, nothing remembered.
    expect(slack.calls).toEqual(["U1"]);
    slack.answer("U1");
    await settle();
    slack.answer("U2");
    await first;
    expect(slack.calls).toEqual(["U1", "U2"]);
    expect(directory.person("U3")).toBeUndefined();
    const again = directory.resolve(["U3"]);
    await settle();
    slack.answer("U3");
    await again;
    expect(directory.name("U3")).toBe("U3");
  });

  it("ask once per person while a call is in flight, and not again while the answer is fresh", async () => {
    const slack = heldLookups();
    let now = 0;
    const directory = new UserDirectory({ lookup: slack.lookup, ttlMs: 1_000, now: () => now });
    const both = Promise.all([directory.resolve(["U1"]), directory.resolve(["U1", "U1"])]);
    await settle();
    slack.answer("U1", { displayName: "Ada", teamId: "T1", guest: true });
    await both;
    await directory.resolve(["U1"]);
    expect(slack.calls).toEqual(["U1"]);
    expect(directory.person("U1")).toEqual({ displayName: "Ada", teamId: "T1", guest: true });
    now = 1_000;
    expect(directory.person("U1")).toBeUndefined();
    const refresh = directory.resolve(["U1"]);
    await settle();
    slack.answer("U1");
    await refresh;
    expect(slack.calls).toEqual(["U1", "U1"]);
  });

  it("remember a failure for failureTtlMs only, as nobody", async () => {
    const slack = heldLookups();
    let now = 0;
    const directory = new UserDirectory({
      lookup: slack.lookup,
      failureTtlMs: 60_000,
      now: () => now,
    });
    const failed = directory.resolve(["U1"]);
    await settle();
    slack.answer("U1", new Error("internal_error"));
    await failed;
    expect(directory.person("U1")).toBeUndefined();
    await directory.resolve(["U1"]);
    expect(slack.calls).toEqual(["U1"]);
    now = 60_000;
    void directory.resolve(["U1"]);
    await settle();
    expect(slack.calls).toEqual(["U1", "U1"]);
  });

  it("keep at most maxEntries people, the oldest going first", async () => {
    const directory = new UserDirectory({
      lookup: async (id) => ({ displayName: id }),
      maxEntries: 3,
    });
    await directory.resolve(["U1", "U2", "U3", "U4", "U5"]);
    expect(directory.size).toBe(3);
    expect(["U1", "U2", "U3", "U4", "U5"].map((id) => directory.name(id))).toEqual([
      undefined,
      undefined,
      "U3",
      "U4",
      "U5",
    ]);
  });
});

describe("lookups for mentioned people's names", () => {
  const ids = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `U${from + i}`);

  it("ask for at most perMessage people per message; known ones and repeats cost nothing", async () => {
    const calls: string[] = [];
    const directory = new UserDirectory({
      lookup: async (id) => {
        calls.push(id);
        return { displayName: id };
      },
      mentions: { perMessage: 3 },
    });
    await directory.resolve(["U100"]);
    await directory.resolveMentioned(["U100", "U101", "U101", ...ids(102, 200)], "UW");
    expect(calls).toEqual(["U100", "U101", "U102", "U103"]);
    expect(directory.name("U104")).toBeUndefined();
    expect(directory.size).toBe(4);
  });

  it("keep to each writer's allowance and the workspace's, per minute", async () => {
    let now = 0;
    const calls: string[] = [];
    const directory = new UserDirectory({
      lookup: async (id) => {
        calls.push(id);
        return { displayName: id };
      },
      now: () => now,
      mentions: { perMessage: 10, perWriterPerMinute: 12, perMinute: 30 },
    });
    await directory.resolveMentioned(ids(100, 10), "UW");
    await directory.resolveMentioned(ids(200, 10), "UW");
    // The writer's dozen is spent: their next message looks nobody up.
    expect(calls).toHaveLength(12);
    await directory.resolveMentioned(ids(300, 10), "UW");
    expect(calls).toHaveLength(12);
    // Others have their own, until the workspace's thirty are spent.
    await directory.resolveMentioned(ids(400, 10), "UV");
    await directory.resolveMentioned(ids(500, 10), "UU");
    await directory.resolveMentioned(ids(600, 10), "UT");
    expect(calls).toHaveLength(30);
    // Who someone is is always asked.
    await directory.resolve(["U999"]);
    expect(calls).toHaveLength(31);
    // A minute later the allowances are back.
    now = 60_000;
    await directory.resolveMentioned(ids(300, 10), "UW");
    expect(calls).toHaveLength(41);
  });

  it("hold at most `concurrent` calls, so a check of who someone is never waits behind them", async () => {
    const slack = heldLookups();
    const directory = new UserDirectory({
      lookup: slack.lookup,
      maxConcurrent: 4,
      mentions: { concurrent: 2 },
    });
    const names = directory.resolveMentioned(ids(100, 20), "UW");
    await settle();
    expect(slack.calls).toEqual(["U100", "U101"]);
    expect(directory.load).toEqual({ running: 2, waiting: 0 });
    // Someone writes: their lookup starts at once, even for a person whose name is queued.
    const who = directory.resolve(["UA", "U110"]);
    await settle();
    expect(slack.calls).toEqual(["U100", "U101", "UA", "U110"]);
    slack.answer("UA", { teamId: "T1" });
    slack.answer("U110", { teamId: "T1" });
    await who;
    expect(directory.person("UA")).toEqual({ teamId: "T1" });
    while (slack.waiting().length > 0) {
      for (const id of slack.waiting()) slack.answer(id);
      await settle();
    }
    await names;
    expect(slack.maxInFlight()).toBeLessThanOrEqual(4);
    // U110's queued name lookup found it known by then: nobody was asked twice.
    expect(slack.calls).toHaveLength(21);
    expect(new Set(slack.calls).size).toBe(21);
  });
});
