import { WebAPIRateLimitedError } from "@slack/web-api";
import { describe, expect, it, onTestFinished } from "vitest";
import type { Allowances } from "../../../src/budgets/allowance.js";
import { localAllowances } from "../../../src/budgets/local-allowances.js";
import { Pacer } from "../../../src/slack/calls/pacer.js";
import { PostGate } from "../../../src/slack/calls/post-gate.js";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";
import { StreamGate } from "../../../src/slack/calls/stream-gate.js";
import type { Clock } from "../../../src/time.js";
import { ManualClock } from "../../support/manual-clock.js";
import { type Replica, replicas, written } from "../../support/shared-budgets.js";

const MINUTE = 60_000;

interface Call {
  t: number;
  replica: string;
  method: string;
  where: string;
}

/**
 * One fake Slack for every replica: records each call, and answers 429 to the calls `limit`
 * picks (with a Retry-After in seconds).
 */
function fakeSlack(
  clock: ManualClock,
  limit: (call: Call) => number | undefined = () => undefined,
) {
  const calls: Call[] = [];
  const call = async (replica: string, method: string, where: string) => {
    const made = { t: clock.now(), replica, method, where };
    calls.push(made);
    const retryAfter = limit(made);
    if (retryAfter !== undefined) throw new WebAPIRateLimitedError(retryAfter);
    return { ok: true };
  };
  return { calls, call };
}

/** The most calls of `calls` that start within any `windowMs`. */
function busiestWindow(calls: Call[], windowMs = MINUTE): number {
  const times = calls.map((c) => c.t).sort((x, y) => x - y);
  let most = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while ((times[j] as number) - (times[i] as number) >= windowMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

/**
 * The test's clock as one replica's process sees it: a timer fires at its time or 1 ms after,
 * by chance, as timers of two processes armed for one instant fire in no set order. (On the
 * bare manual clock, the replica that armed first would always win the race for a token.)
 */
function lateByChance(clock: ManualClock, seed: number): Clock {
  let state = seed;
  const late = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (state >>> 16) & 1;
  };
  return {
    now: () => clock.now(),
    sleep: (ms, signal) => clock.sleep(ms, signal),
    timer: (ms, fn) => clock.timer(ms + late(), fn),
  };
}

/**
 * A replica's Slack side as the bot wires it: one scheduler, the edit pacer (Tier 3: 40 a
 * minute with a burst of 4, so any minute holds at most 44 < 50) and the post gate. Closed
 * when the test has finished, before its database connection.
 */
function replicaOf(
  name: string,
  clock: ManualClock,
  slack: ReturnType<typeof fakeSlack>,
  allowances: Allowances,
  edits: { updatesPerMinute: number; burst?: number } = { updatesPerMinute: 40, burst: 4 },
) {
  const scheduler = new CallScheduler({
    clock: lateByChance(clock, name.charCodeAt(0)),
    random: () => 0.5,
    allowances,
  });
  onTestFinished(() => scheduler.close());
  const pacer = new Pacer<string>(
    (target) => slack.call(name, "chat.update", target.ts).then(() => undefined),
    { scheduler, ...edits },
  );
  const posts = new PostGate({ scheduler, retryDelayMs: 100 });
  /** Edits `count` messages of its own without pause: each new text as soon as the last landed. */
  const stream = (count: number) => {
    for (let m = 0; m < count; m++) {
      const target = { team: "T1", channel: "C1", ts: `${name}.${m}` };
      const next = (n: number): void => {
        pacer.edit(target, `text ${n}`).then(
          () => next(n + 1),
          () => undefined,
        );
      };
      next(0);
    }
  };
  const post = (channel: string) =>
    posts.post({ team: "T1", channel }, () => slack.call(name, "chat.postMessage", channel));
  return { stream, post };
}

/**
 * The test's manual clock, which moves only once what the replicas in `sharing` sent to the
 * database has landed: on it a second passes in no real time, while a round trip takes real
 * time. Unwaited, a replica would take at the end of a step what it asked for at its start,
 * which in real time never happens.
 */
function sharedClock(sharing: Replica[]): ManualClock {
  return new ManualClock(undefined, {
    settle: async () => {
      await written(...sharing);
    },
  });
}

/** Two replicas over one database (or, for contrast, each on budgets of its own). */
async function twoReplicas(
  clock: ManualClock,
  sharing: Replica[],
  slack: ReturnType<typeof fakeSlack>,
  shared = true,
) {
  if (shared) sharing.push(...(await replicas(2)));
  const [a, b] = shared
    ? sharing.map((r) => r.budgets.allowances)
    : [localAllowances, localAllowances];
  return [
    replicaOf("A", clock, slack, a ?? localAllowances),
    replicaOf("B", clock, slack, b ?? localAllowances),
    (ms: number) => clock.advance(ms),
  ] as const;
}

/** The chat.update calls of two sharing replicas streaming `inA` and `inB` messages for 5 minutes. */
async function editsOverFiveMinutes(inA: number, inB: number) {
  const sharing: Replica[] = [];
  const clock = sharedClock(sharing);
  const slack = fakeSlack(clock);
  const [a, b, advance] = await twoReplicas(clock, sharing, slack);
  a.stream(inA);
  b.stream(inB);
  await advance(5 * MINUTE);
  return slack.calls.filter((c) => c.method === "chat.update");
}

describe("two replicas sharing their Slack budgets in PostgreSQL", () => {
  it("together stay within one workspace's chat.update budget, each getting a share", async () => {
    const edits = await editsOverFiveMinutes(10, 10);
    expect(busiestWindow(edits)).toBeLessThanOrEqual(44);
    // The budget is used, not starved: 4 at once, then 40 a minute.
    expect(edits.length).toBeGreaterThanOrEqual(4 + 5 * 40 - 1);
    for (const replica of ["A", "B"]) {
      expect(edits.filter((c) => c.replica === replica).length).toBeGreaterThan(50);
    }
  });

  it("keep their interim edits together to half the edits' minute, leaving the rest to finals", async () => {
    const sharing: Replica[] = [];
    const clock = sharedClock(sharing);
    const slack = fakeSlack(clock);
    sharing.push(...(await replicas(2)));
    // The pacer as the bot runs it: a window of 40 a minute, interim edits paced to 20 a
    // minute with a burst of 5, in each replica; the pace shared, both together keep to it.
    const [a, b] = sharing.map((r, i) =>
      replicaOf(i === 0 ? "A" : "B", clock, slack, r.budgets.allowances, { updatesPerMinute: 40 }),
    );
    a?.stream(10);
    b?.stream(10);
    await clock.advance(3 * MINUTE);
    const edits = slack.calls.filter((c) => c.method === "chat.update");
    expect(busiestWindow(edits)).toBeLessThanOrEqual(20 + 5);
    expect(edits.length).toBeGreaterThanOrEqual(5 + 3 * 20 - 2);
  });

  it("hand the budget to the messages edited longest ago in either, however few each has", async () => {
    const edits = await editsOverFiveMinutes(1, 9);
    const counts = new Map<string, number>();
    for (const edit of edits) counts.set(edit.where, (counts.get(edit.where) ?? 0) + 1);
    const perMessage = [...counts.values()];
    expect(perMessage).toHaveLength(10);
    // A round robin over the ten. When whichever replica's timer fired first won each token,
    // A's one message got dozens of edits more than each of B's nine.
    expect(Math.max(...perMessage) - Math.min(...perMessage)).toBeLessThanOrEqual(2);
  });

  it("(without sharing, the same two make about twice as many: what the test above rules out)", async () => {
    const clock = new ManualClock();
    const slack = fakeSlack(clock);
    const [a, b, advance] = await twoReplicas(clock, [], slack, false);
    a.stream(10);
    b.stream(10);
    await advance(2 * MINUTE);
    expect(busiestWindow(slack.calls)).toBeGreaterThan(80);
  });

  it("a 429 met by one pauses the other's calls of that method until Retry-After", async () => {
    const sharing: Replica[] = [];
    const clock = sharedClock(sharing);
    const t0 = clock.now();
    let limited: number | undefined;
    const slack = fakeSlack(clock, (call) => {
      if (limited !== undefined || call.replica !== "A" || call.t < t0 + 20_000) return undefined;
      limited = call.t;
      return 30;
    });
    const [a, b, advance] = await twoReplicas(clock, sharing, slack);
    a.stream(5);
    b.stream(5);
    // B posts meanwhile: another method, not paused.
    const posted = b.post("C9");
    await advance(20_000);
    const post = b.post("C9");
    await advance(2 * MINUTE);
    await Promise.all([posted, post]);
    const at = limited as number;
    const edits = slack.calls.filter((c) => c.method === "chat.update");
    const during = edits.filter((c) => c.t > at && c.t < at + 30_000);
    expect(during).toEqual([]);
    const after = edits.filter((c) => c.t >= at + 30_000);
    expect(new Set(after.map((c) => c.replica))).toEqual(new Set(["A", "B"]));
    expect(slack.calls.filter((c) => c.method === "chat.postMessage")).toHaveLength(2);
  });

  it("share each channel's pace of posts, and its 429 pause, but not other channels'", async () => {
    const sharing: Replica[] = [];
    const clock = sharedClock(sharing);
    const t0 = clock.now();
    let limited: number | undefined;
    const slack = fakeSlack(clock, (call) => {
      if (limited !== undefined || call.replica !== "A" || call.where !== "C1") return;
      if (call.t < t0 + 5_000) return;
      limited = call.t;
      return 20;
    });
    const [a, b, advance] = await twoReplicas(clock, sharing, slack);
    const sent: Promise<unknown>[] = [];
    for (let i = 0; i < 6; i++) {
      sent.push(a.post("C1"), b.post("C1"));
    }
    await advance(4_000);
    sent.push(b.post("C2"));
    await advance(MINUTE);
    await Promise.all(sent);
    // To the second: the replicas' timers fire up to 1 ms late (lateByChance).
    const second = (t: number) => Math.floor((t - t0) / 1_000);
    const times = (channel: string) =>
      slack.calls.filter((c) => c.where === channel).map((c) => second(c.t));
    // A's first post from 5 s on meets the 429. Which replica wins each second's token is a
    // race between their round trips (every post waited from the same instant), so A's may
    // come at 5 s or a few seconds later.
    const at = second(limited as number);
    expect(at).toBeGreaterThanOrEqual(5);
    // One channel, two replicas: 2 at once, then 1 a second between them (the gate's default),
    // until A's 429 holds both back for 20 s; then the channel's burst is whole again, and the
    // 429'd post is made again with the others: 13 calls for 12 posts.
    const before = [0, ...Array.from({ length: at + 1 }, (_, s) => s)];
    const after = Array.from(
      { length: 13 - before.length },
      (_, i) => at + 20 + Math.max(0, i - 1),
    );
    expect(times("C1")).toEqual([...before, ...after]);
    expect(times("C2")).toEqual([4]);
  });

  it("share the stream methods' workspace budgets, but keep each message's own pace at home", async () => {
    const [replica] = await replicas(1);
    const clock = sharedClock([replica]);
    const scheduler = new CallScheduler({ clock, allowances: replica.budgets.allowances });
    onTestFinished(() => scheduler.close());
    const gate = new StreamGate({ scheduler });
    const where = { team: "T1", channel: "C1" };
    await Promise.all([
      gate.starts.post(where, async () => "started"),
      gate.appends.post({ ...where, lane: "1.1" }, async () => "appended"),
      gate.stops.post({ ...where, lane: "1.1" }, async () => "stopped"),
      // Posts to a channel are limited by Slack whichever replica makes them: shared.
      new PostGate({ scheduler }).post(where, async () => "posted"),
    ]);
    const keys = await replica.query<{ key: string }>(
      `SELECT key FROM budget_buckets UNION SELECT key FROM budget_slots ORDER BY key`,
    );
    expect(keys.map((k) => k.key)).toEqual([
      "slack:T1:chat.appendStream",
      "slack:T1:chat.postMessage",
      "slack:T1:chat.postMessage:C1",
      "slack:T1:chat.startStream",
      "slack:T1:chat.stopStream",
    ]);
  });
});
