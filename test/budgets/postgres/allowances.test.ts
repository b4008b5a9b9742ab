import { setImmediate } from "node:timers/promises";
import pg from "pg";
import { describe, expect, it, onTestFinished } from "vitest";
import type { Allowance, AllowanceRules } from "../../../src/budgets/allowance.js";
import { localAllowances } from "../../../src/budgets/local-allowances.js";
import { sharedBudgets } from "../../../src/budgets/postgres/shared-budgets.js";
import { AHEAD_MS } from "../../../src/budgets/postgres/window.js";
import { PostGate } from "../../../src/slack/calls/post-gate.js";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";
import { postgresUrl } from "../../support/postgres.js";
import {
  type Replica,
  readyAt,
  replicas,
  settled,
  take,
  written,
} from "../../support/shared-budgets.js";

const T0 = Date.UTC(2026, 0, 1);

/** Statements waiting, directly or behind another, for a lock the connection asking holds. */
const WAITING_TAKES = `WITH RECURSIVE waiting (pid) AS (
    SELECT pid FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY (pg_blocking_pids(pid))
    UNION
    SELECT l.pid FROM pg_locks AS l JOIN waiting AS w ON w.pid = ANY (pg_blocking_pids(l.pid))
     WHERE NOT l.granted)
  SELECT count(DISTINCT pid) AS n FROM waiting`;
const SCOPE = { team: "T1", method: "chat.update" };

/** The budgets of `replica`, with every statement they send written down in `sent`. */
function counted(replica: Replica, sent: string[]) {
  const budgets = sharedBudgets((text, params) => {
    sent.push(text.replace(/\s+/g, " ").trim());
    return replica.query(text, params);
  });
  // Registered after the replica's close, so run before it.
  onTestFinished(() => budgets.settled());
  return budgets;
}

/** A small deterministic generator (mulberry32): the same sequence of takes every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * What an allowance answers at each step of one sequence: readyAt (0, 1, 5 ahead), a take,
 * readyAt again; and what `reader()`, a replica that has not looked yet, reads after it. A
 * shared one is asked as the scheduler asks it, and answers once its round trips landed.
 */
async function answers(
  allowance: Allowance,
  steps: number[],
  reader = () => allowance,
): Promise<unknown[]> {
  const found = [];
  for (const now of steps) {
    const before = [];
    for (const ahead of [0, 1, 5]) before.push(await readyAt(allowance, now, ahead));
    const took = await take(allowance, now);
    const after = await readyAt(allowance, now);
    found.push({ now, before, took, after, seen: await readyAt(reader(), now, 2) });
  }
  return found;
}

/** Instants of a busy sequence: often several takes in one ms, sometimes a long pause. */
function instants(seed: number, count: number): number[] {
  const next = random(seed);
  let now = T0;
  return Array.from({ length: count }, () => {
    const r = next();
    now += r < 0.3 ? 0 : r < 0.9 ? Math.floor(next() * 2_500) : Math.floor(next() * 90_000);
    return now;
  });
}

const RULES: [string, AllowanceRules][] = [
  ["a token bucket (40/min, burst 4)", { perMinute: 40, burst: 4 }],
  ["a token bucket of fractional spacing (47/min, burst 3)", { perMinute: 47, burst: 3 }],
  ["a token bucket without burst (7/min)", { perMinute: 7, burst: 1 }],
  ["a sliding window (18/min)", { perMinute: 18, burst: 1, window: true }],
  ["a sliding window (3/min)", { perMinute: 3, burst: 1, window: true }],
];

describe.each(RULES)("shared in PostgreSQL, %s", (_name, rules) => {
  it("answers as the in-memory one does, take after take", async () => {
    const [a, b] = await replicas(2);
    const steps = instants(rules.perMinute, 300);
    const local = await answers(localAllowances(SCOPE, rules), steps);
    // One replica takes; the other reads the same key from its own connection.
    const shared = await answers(a.budgets.allowances(SCOPE, rules), steps, () =>
      b.budgets.allowances(SCOPE, rules),
    );
    expect(shared).toEqual(local);
    expect(local.filter((s) => (s as { took: boolean }).took).length).toBeGreaterThan(20);
  });

  it("is one budget for two replicas taking in turn", async () => {
    const [a, b] = await replicas(2);
    const steps = instants(rules.perMinute + 1, 200);
    const local = localAllowances(SCOPE, rules);
    const mine = a.budgets.allowances(SCOPE, rules);
    const theirs = b.budgets.allowances(SCOPE, rules);
    const took = [];
    for (const [i, now] of steps.entries()) took.push(await take(i % 2 === 0 ? mine : theirs, now));
    expect(took).toEqual(steps.map((now) => local.tryTake(now)));
  });

  it("is paused for every replica by a 429 met by one, and never for less", async () => {
    const [a, b] = await replicas(2);
    const mine = a.budgets.allowances(SCOPE, rules);
    const theirs = b.budgets.allowances(SCOPE, rules);
    mine.pauseUntil?.(T0 + 30_000);
    mine.pauseUntil?.(T0 + 10_000);
    await written(a);
    expect(await readyAt(theirs, T0)).toBe(T0 + 30_000);
    expect(await take(theirs, T0 + 29_999)).toBe(false);
    expect(await take(theirs, T0 + 30_000)).toBe(true);
    // Another workspace's, and another method's, are not paused.
    const other = b.budgets.allowances({ team: "T2", method: "chat.update" }, rules);
    expect(await take(other, T0)).toBe(true);
    const post = b.budgets.allowances({ ...SCOPE, method: "chat.postMessage" }, rules);
    expect(await take(post, T0)).toBe(true);
  });
});

describe("a bucket shared in PostgreSQL, with calls waiting in two replicas", () => {
  const rules = { perMinute: 60, burst: 1 };
  const oneBucketInTwoReplicas = async () =>
    (await replicas(2)).map((r) => r.budgets.allowances(SCOPE, rules)) as [Allowance, Allowance];
  /** A replica's place when the call asking is the only one it has waiting. */
  const only = (rank: number) => ({ rank, next: Number.POSITIVE_INFINITY });

  it("hands each token to the call that has waited longest in either", async () => {
    const [mine, theirs] = await oneBucketInTwoReplicas();
    expect(await take(mine, T0, { rank: 100, next: 300 })).toBe(true);
    // B's call (rank 200) waits; A's next (300) is younger: the token of T0 + 1 s is B's.
    expect(await take(theirs, T0 + 500, only(200))).toBe(false);
    expect(await take(mine, T0 + 1_000, only(300))).toBe(false);
    // A heard that another call goes first: it asks again when the token after that is due.
    expect(await readyAt(mine, T0 + 1_000)).toBe(T0 + 2_000);
    expect(await take(theirs, T0 + 1_000, only(200))).toBe(true);
    expect(await take(mine, T0 + 2_000, only(300))).toBe(true);
  });

  it("lets a replica's younger call go once the older one has been served or its replica is gone", async () => {
    const [mine, theirs] = await oneBucketInTwoReplicas();
    // B took with nothing more waiting: it holds nobody back.
    expect(await take(theirs, T0, only(100))).toBe(true);
    expect(await take(mine, T0 + 1_000, only(900))).toBe(true);
    // B waits with an old call, then dies: it holds A back for two tokens and a second at most.
    expect(await take(theirs, T0 + 1_500, only(200))).toBe(false);
    expect(await take(mine, T0 + 2_000, only(900))).toBe(false);
    expect(await take(mine, T0 + 3_000, only(900))).toBe(false);
    expect(await readyAt(mine, T0 + 3_000)).toBe(T0 + 4_000);
    expect(await take(mine, T0 + 4_000, only(900))).toBe(false);
    // B's place lasted until T0 + 4.5 s.
    expect(await take(mine, T0 + 5_000, only(900))).toBe(true);
  });

  /** A and B wait behind a token C took at T0: B's call (rank 200) before A's (900). */
  const behindB = async () => {
    const [a, b, c] = await replicas(3);
    const [mine, theirs, third] = [a, b, c].map((r) => r.budgets.allowances(SCOPE, rules));
    expect(await take(third as Allowance, T0)).toBe(true);
    expect(await take(theirs as Allowance, T0 + 100, only(200))).toBe(false);
    expect(await take(mine as Allowance, T0 + 200, only(900))).toBe(false);
    return { mine: mine as Allowance, theirs: theirs as Allowance, b };
  };

  it("still hands the token to the other replica's call while it waits", async () => {
    const { mine, theirs } = await behindB();
    // No token at T0 + 200 ms: A asks again when it comes, not after it.
    expect(await readyAt(mine, T0 + 200)).toBe(T0 + 1_000);
    expect(await take(mine, T0 + 1_000, only(900))).toBe(false);
    expect(await readyAt(mine, T0 + 1_000)).toBe(T0 + 2_000);
    expect(await take(theirs, T0 + 1_000, only(200))).toBe(true);
    expect(await take(mine, T0 + 2_000, only(900))).toBe(true);
  });

  it("lets a call go at its token once the other replica's waiting call went away", async () => {
    const { mine, theirs, b } = await behindB();
    // B's call went elsewhere (its text rode on the message's last call): B withdraws.
    theirs.withdraw?.();
    await written(b);
    expect(await take(mine, T0 + 1_000, only(900))).toBe(true);
  });

  it("takes without a place as before, whoever waits", async () => {
    const [mine, theirs] = await oneBucketInTwoReplicas();
    expect(await take(theirs, T0, { rank: 1, next: 1 })).toBe(true);
    expect(await take(mine, T0 + 1_000)).toBe(true);
  });
});

describe("shared budgets in PostgreSQL", () => {
  it("keep a lane's pace apart from its workspace's, keyed by names only", async () => {
    const [a] = await replicas(1);
    const rules = { perMinute: 60, burst: 1 };
    const workspace = a.budgets.allowances({ team: "T1", method: "chat.postMessage" }, rules);
    const channel = a.budgets.allowances(
      { team: "T1", method: "chat.postMessage", lane: "C1" },
      rules,
    );
    const took = [await take(workspace, T0), await take(channel, T0), await take(channel, T0)];
    expect(took).toEqual([true, true, false]);
    const keys = await a.query<{ key: string }>("SELECT key FROM budget_buckets ORDER BY key");
    expect(keys?.map((k) => k.key)).toEqual([
      "slack:T1:chat.postMessage",
      "slack:T1:chat.postMessage:C1",
    ]);
  });

  it("take a window's slots for every call ready in one statement, and delete those no call spent", async () => {
    const [a] = await replicas(1);
    const rules = { perMinute: 20, burst: 1, window: true };
    const window = a.budgets.allowances({ team: "T1", method: "chat.startStream" }, rules);
    const slots = async () =>
      (await a.query<{ n: number }>("SELECT count(*)::int AS n FROM budget_slots"))[0]?.n;
    // Five calls are ready: the first asks for five slots, and gets them in one round trip.
    expect(window.tryTake(T0, { rank: 1, next: 2, ready: 5 })).toBe(false);
    await settled(window);
    expect(await slots()).toBe(5);
    const took = [1, 2, 3].map(() => window.tryTake(T0 + 1));
    expect(took).toEqual([true, true, true]);
    // Two went elsewhere: theirs are let go once kept past their calls' time, and count no more.
    expect(window.tryTake(T0 + 5_000)).toBe(false);
    await written(a);
    expect(await slots()).toBe(4);
  });

  it("take a bucket's tokens for every call ready in one statement, as many as the bucket has", async () => {
    const [a, b] = await replicas(2);
    const sent: string[] = [];
    const rules = { perMinute: 60, burst: 4 };
    const bucket = counted(a, sent).allowances({ team: "T1", method: "chat.postMessage" }, rules);
    const local = localAllowances({ team: "T1", method: "chat.postMessage" }, rules);
    // Six calls are ready: one statement takes the four the bucket holds.
    expect(bucket.tryTake(T0, { rank: 1, next: 2, ready: 6 })).toBe(false);
    await settled(bucket);
    const takes = () => sent.filter((text) => text.startsWith("WITH taken")).length;
    expect(takes()).toBe(1);
    const took = Array.from({ length: 6 }, () => bucket.tryTake(T0 + 1));
    expect(took).toEqual([true, true, true, true, false, false]);
    // The take taught when the next token comes: the fifth does not ask before then. The
    // bucket stands where four single takes leave it.
    expect(takes()).toBe(1);
    const singles = [0, 1, 2, 3, 4].map(() => local.tryTake(T0));
    expect(singles).toEqual([true, true, true, true, false]);
    expect(
      await readyAt(
        b.budgets.allowances({ team: "T1", method: "chat.postMessage" }, rules),
        T0 + 1,
      ),
    ).toBe(local.readyAt(T0 + 1));
    // A second later, one token more: a batch of three gets that one.
    expect(await take(bucket, T0 + 1_000, { rank: 3, next: 4, ready: 3 })).toBe(true);
    expect(bucket.tryTake(T0 + 1_000)).toBe(false);
    expect(takes()).toBe(2);
  });

  it("count what a take of several tokens took on the row it wrote, not on what it read first", async () => {
    const [a, b] = await replicas(2);
    const rules = { perMinute: 60, burst: 4 };
    const scope = { team: "T1", method: "chat.postMessage", lane: "C1" };
    const key = "slack:T1:chat.postMessage:C1";
    // A full bucket's row, locked by another connection: both takes read it, then wait.
    await a.query("INSERT INTO budget_buckets (key, arrival) VALUES ($1, $2)", [key, T0 - 60_000]);
    const [{ schema } = { schema: "" }] = await a.query<{ schema: string }>(
      "SELECT current_schema() AS schema",
    );
    const locker = new pg.Client({
      connectionString: postgresUrl(),
      options: `-c search_path=${schema}`,
    });
    await locker.connect();
    onTestFinished(() => locker.end());
    await locker.query("BEGIN");
    await locker.query("SELECT 1 FROM budget_buckets WHERE key = $1 FOR UPDATE", [key]);
    const both = [a, b].map((r) => r.budgets.allowances(scope, rules));
    for (const bucket of both) bucket.tryTake(T0, { rank: 1, next: 2, ready: 3 });
    while (Number((await locker.query(WAITING_TAKES)).rows[0]?.n) < 2) await setImmediate();
    await locker.query("COMMIT");
    await Promise.all(both.map(settled));
    // The first took three, the second the one left: it counted on the row the first wrote.
    const took = both.map((bucket) => {
      let n = 0;
      while (bucket.tryTake(T0 + 1)) n++;
      return n;
    });
    expect(took.sort()).toEqual([1, 3]);
  });

  it("take ahead for calls expected, those expected meanwhile once the first take lands", async () => {
    const [a] = await replicas(1);
    const sent: string[] = [];
    const rules = { perMinute: 60, burst: 4 };
    const budgets = counted(a, sent);
    const bucket = budgets.allowances({ team: "T1", method: "chat.postMessage" }, rules);
    const takes = () => sent.filter((text) => text.startsWith("WITH taken")).length;
    // Three calls are expected: the first take is on its way when the others are told of.
    bucket.expect?.(T0);
    bucket.expect?.(T0 + 1);
    bucket.expect?.(T0 + 2);
    expect(takes()).toBe(1);
    await budgets.settled();
    // One more statement, for the two: each call finds its take in hand when it comes.
    expect(takes()).toBe(2);
    expect([0, 1, 2].map(() => bucket.tryTake(T0 + 100))).toEqual([true, true, true]);
    expect(takes()).toBe(2);
    // A take made for a call expected is kept no longer than any in hand: past two seconds
    // it is let go, and the call asks as any other.
    bucket.expect?.(T0 + 1_000);
    await budgets.settled();
    expect(bucket.tryTake(T0 + 3_100)).toBe(false);
    expect(takes()).toBe(4);
  });

  it("count a window's slot taken ahead only briefly until its call goes, then a window from the call", async () => {
    const [a, b] = await replicas(2);
    const rules = { perMinute: 1, burst: 1, window: true };
    const scope = { team: "T1", method: "chat.startStream" };
    const window = a.budgets.allowances(scope, rules);
    const untilAt = async () =>
      (await a.query<{ until_at: number }>("SELECT until_at FROM budget_slots")).map((r) =>
        Number(r.until_at),
      );
    window.expect?.(T0);
    await settled(window);
    expect(await untilAt()).toEqual([T0 + AHEAD_MS]);
    // Another replica refused meanwhile asks again when the slot would free unspent.
    const theirs = b.budgets.allowances(scope, rules);
    expect(await take(theirs, T0 + 1)).toBe(false);
    expect(theirs.readyAt(T0 + 1)).toBe(T0 + AHEAD_MS);
    // Spent: a window (Slack's minute and a second) from the call.
    expect(await take(window, T0 + 1_500)).toBe(true);
    expect(await untilAt()).toEqual([T0 + 1_500 + 61_000]);
    expect(await take(theirs, T0 + AHEAD_MS)).toBe(false);
    expect(theirs.readyAt(T0 + AHEAD_MS)).toBe(T0 + 1_500 + 61_000);
  });

  it("free a slot taken ahead and never spent, for every replica, however its taker fares", async () => {
    const [a, b] = await replicas(2);
    const rules = { perMinute: 1, burst: 1, window: true };
    const scope = { team: "T1", method: "chat.startStream" };
    // The taker expects a call that never comes, and never looks at its budget again.
    a.budgets.allowances(scope, rules).expect?.(T0);
    await written(a);
    const theirs = b.budgets.allowances(scope, rules);
    expect(await take(theirs, T0 + 1)).toBe(false);
    expect(await take(theirs, T0 + AHEAD_MS)).toBe(true);
  });

  it("give a post expected its channel's pace and its workspace's budget from the hand", async () => {
    const [a] = await replicas(1);
    const sent: string[] = [];
    const budgets = counted(a, sent);
    const gate = new PostGate({ scheduler: new CallScheduler({ allowances: budgets.allowances }) });
    onTestFinished(() => gate.close());
    gate.expect({ team: "T1", channel: "C1" });
    await budgets.settled();
    const takes = () => sent.filter((text) => text.startsWith("WITH taken")).length;
    expect(takes()).toBe(2);
    const posted = await gate.post({ team: "T1", channel: "C1" }, async () => ({ ts: "1.1" }));
    expect(posted).toEqual({ ts: "1.1" });
    expect(takes()).toBe(2);
  });

  it("take at once, awaited, for a choice: three replicas choose no more than the window has", async () => {
    const rules = { perMinute: 3, burst: 1, window: true };
    const scope = { team: "T1", method: "chat.startStream", lane: "chosen" };
    const windows = (await replicas(3)).map((r) => r.budgets.allowances(scope, rules));
    const took = await Promise.all(
      Array.from({ length: 7 }, (_, i) => windows[i % 3]?.takeNow?.(T0 + i)),
    );
    expect(took.filter((t) => t === true)).toHaveLength(3);
    // A minute (and the window's second) after the last of them, there is room again: which
    // three the database let through is the order their statements reached it.
    expect(await windows[0]?.takeNow?.(T0 + 6 + 61_000)).toBe(true);
  });

  it("answer a choice the window refused without asking again until it could have room", async () => {
    const [a] = await replicas(1);
    const sent: string[] = [];
    const rules = { perMinute: 2, burst: 1, window: true };
    const scope = { team: "T1", method: "chat.startStream", lane: "chosen" };
    const window = counted(a, sent).allowances(scope, rules);
    const took = [await window.takeNow?.(T0), await window.takeNow?.(T0 + 1)];
    await written(a);
    const before = sent.length;
    // Refused: the slots that say when the window has room come back in the same statement.
    expect(await window.takeNow?.(T0 + 2)).toBe(false);
    expect(sent.length - before).toBe(1);
    // Until the first slot frees, a choice is refused with no round trip.
    expect(await window.takeNow?.(T0 + 30_000)).toBe(false);
    expect(await window.takeNow?.(T0 + 60_000)).toBe(false);
    expect(sent.length - before).toBe(1);
    expect(await window.takeNow?.(T0 + 61_000)).toBe(true);
    expect(took).toEqual([true, true]);
  });

  it("keep a window's reading through its own takes rather than read it again", async () => {
    const [a] = await replicas(1);
    const sent: string[] = [];
    const rules = { perMinute: 3, burst: 1, window: true };
    const window = counted(a, sent).allowances(SCOPE, rules);
    // Read once (ahead of one call), then a take: the reading gets the take's slot.
    expect(await readyAt(window, T0, 1)).toBe(T0);
    expect(await take(window, T0)).toBe(true);
    expect(await take(window, T0)).toBe(true);
    await written(a);
    const reads = () => sent.filter((text) => text.startsWith("SELECT ARRAY")).length;
    expect(reads()).toBe(1);
    // Two of three slots are taken: as in memory, the call after the next waits for the first.
    const local = localAllowances(SCOPE, rules);
    expect([local.tryTake(T0), local.tryTake(T0)]).toEqual([true, true]);
    expect(window.readyAt(T0 + 10, 1)).toBe(local.readyAt(T0 + 10, 1));
    expect(local.readyAt(T0 + 10, 1)).toBeGreaterThan(T0 + 10);
    expect(reads()).toBe(1);
  });

  it("ask a post's channel pace and its workspace's budget side by side, not one after the other", async () => {
    const [a] = await replicas(1);
    const log: string[] = [];
    const budgets = sharedBudgets(async (text, params) => {
      const take = text.trimStart().startsWith("WITH taken") ? String(params[0]) : undefined;
      if (take) log.push(`asked ${take}`);
      const rows = await a.query(text, params);
      if (take) log.push(`landed ${take}`);
      return rows;
    });
    onTestFinished(() => budgets.settled());
    const gate = new PostGate({ scheduler: new CallScheduler({ allowances: budgets.allowances }) });
    onTestFinished(() => gate.close());
    const posted = await gate.post({ team: "T1", channel: "C1" }, async () => ({ ts: "1.1" }));
    expect(posted).toEqual({ ts: "1.1" });
    // Both takes were on their way before either had landed, and each was asked once.
    expect(log.slice(0, 2).sort()).toEqual([
      "asked slack:T1:chat.postMessage",
      "asked slack:T1:chat.postMessage:C1",
    ]);
    expect(log).toHaveLength(4);
  });

  it("take the workspace's budget for posts of several channels queued together in one statement", async () => {
    const [a] = await replicas(1);
    const workspaceTakes: number[] = [];
    const budgets = sharedBudgets(async (text, params) => {
      if (text.trimStart().startsWith("WITH taken") && params[0] === "slack:T1:chat.postMessage")
        workspaceTakes.push(Number(params[5]));
      return a.query(text, params);
    });
    onTestFinished(() => budgets.settled());
    const gate = new PostGate({ scheduler: new CallScheduler({ allowances: budgets.allowances }) });
    onTestFinished(() => gate.close());
    const channels = ["C1", "C2", "C3"];
    const posted = await Promise.all(
      channels.map((channel) =>
        gate.post({ team: "T1", channel }, async () => ({ ts: `${channel}.1` })),
      ),
    );
    expect(posted).toEqual([{ ts: "C1.1" }, { ts: "C2.1" }, { ts: "C3.1" }]);
    // One take, asked beside the channels' paces, for the three posts.
    expect(workspaceTakes).toEqual([3]);
  });

  it("sweep away what no longer counts, and nothing that does", async () => {
    const [a] = await replicas(1, { sweepEveryMs: 3_600_000 });
    const rules = { perMinute: 1, burst: 1 };
    const old = a.budgets.allowances({ team: "T1", method: "old" }, rules);
    const recent = a.budgets.allowances({ team: "T1", method: "recent" }, rules);
    const window = a.budgets.allowances({ team: "T1", method: "w" }, { ...rules, window: true });
    await take(old, T0);
    old.pauseUntil?.(T0 + 1_000);
    await take(window, T0);
    await take(recent, T0 + 170_000);
    a.budgets.sweep(T0 + 181_000);
    await written(a);
    const count = async (table: string) =>
      (await a.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n;
    const counts = [
      await count("budget_buckets"),
      await count("budget_slots"),
      await count("budget_pauses"),
    ];
    expect(counts).toEqual([1, 0, 0]);
    expect(await readyAt(recent, T0 + 181_000)).toBe(T0 + 230_000);
  });

  it("go by the replica's own copy while the database is out of reach, and back once it answers", async () => {
    const errors: unknown[] = [];
    const [a] = await replicas(1, { retryMs: 2_000, onError: (error) => errors.push(error) });
    const bucket = a.budgets.allowances(SCOPE, { perMinute: 60, burst: 1 });
    expect(await take(bucket, T0)).toBe(true);
    // The first take's sweep of the tables has landed: only the takes meet the missing table.
    await written(a);
    await a.query("ALTER TABLE budget_buckets RENAME TO budget_buckets_gone");
    // The take asked fails: for the next two seconds the replica's own bucket answers.
    expect(await take(bucket, T0 + 1_000)).toBe(true);
    expect(errors).toHaveLength(1);
    expect(await take(bucket, T0 + 1_500)).toBe(false);
    expect(bucket.readyAt(T0 + 1_500)).toBe(T0 + 2_000);
    expect(errors).toHaveLength(1);
    await a.query("ALTER TABLE budget_buckets_gone RENAME TO budget_buckets");
    // Asked again: the shared bucket, last taken from at T0, answers.
    expect(await take(bucket, T0 + 3_000)).toBe(true);
    expect(await readyAt(bucket, T0 + 3_000)).toBe(T0 + 4_000);
    expect(errors).toHaveLength(1);
  });
});
