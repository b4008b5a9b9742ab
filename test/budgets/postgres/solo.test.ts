import { CompiledQuery } from "kysely";
import { describe, expect, it, onTestFinished } from "vitest";
import type { Allowance, AllowanceRules } from "../../../src/budgets/allowance.js";
import { sharedBudgets } from "../../../src/budgets/postgres/shared-budgets.js";
import { SoloLock } from "../../../src/budgets/postgres/solo.js";
import type { SlotRules } from "../../../src/budgets/service/slot-window.js";
import { SLACK_MINUTE_MS } from "../../../src/budgets/window.js";
import { migratePostgres } from "../../../src/store/postgres/migrations.js";
import { postgresDatabase } from "../../../src/store/sql/postgres-pool.js";
import { postgresUrl, testSchema } from "../../support/postgres.js";
import { take } from "../../support/shared-budgets.js";

const T0 = 1_000_000;
const WINDOW: AllowanceRules = { perMinute: 3, burst: 1, window: true };
const BUCKET: AllowanceRules = { perMinute: 6, burst: 2 };
const SCOPE = { team: "T1", method: "chat.startStream" };
const SLOTS: SlotRules = { user: "u-fingerprint", kind: "request", limit: 2, holdMs: 61_000 };
/** The lone-replica lock's first key (solo.ts). */
const SOLO_LOCK = 0x736f_6c6f;
const CLOCK = { now: () => T0, timer: () => () => undefined, sleep: async () => undefined };

/** `count` takes, one a millisecond after `t`, each answered at once (a budget in memory). */
function takesAfter(allowance: Allowance, t: number, count: number): boolean[] {
  return Array.from({ length: count }, (_, i) => allowance.tryTake(t + i + 1));
}

/** Timers the test fires itself: the lone-replica lock's looks and retries. */
function manualTimers() {
  const due = new Set<() => void>();
  return {
    timer: (_ms: number, fn: () => void) => {
      due.add(fn);
      return () => due.delete(fn);
    },
    /** How many are set and not fired. */
    pending: () => due.size,
    fire: () => {
      const fns = [...due];
      due.clear();
      for (const fn of fns) fn();
    },
  };
}

/**
 * Replicas of the bot's budgets on one schema of the test's own, each with its own pool and
 * its lone-replica lock, as replicaBudgets wires them. Closed (the lock first, handing over
 * what it spent) before the schema is dropped.
 */
async function schemaForReplicas() {
  const schema = testSchema();
  await migratePostgres(postgresUrl(), schema);
  const admin = postgresDatabase(postgresUrl(), { schema, max: 1 });
  onTestFinished(() => admin.close());
  const read = async <T>(text: string, params: unknown[] = []) =>
    (await admin.db.executeQuery(CompiledQuery.raw(text, params))).rows as T[];
  /** The server processes holding or awaiting this schema's lone-replica lock as `where` says. */
  const locks = (where: string) =>
    read<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1
          AND objid = (hashtext($2)::bigint & 4294967295)::oid AND ${where}`,
      [SOLO_LOCK, schema],
    );
  const replica = (waitMs?: number) => {
    const database = postgresDatabase(postgresUrl(), { schema, max: 2 });
    let statements = 0;
    const query = async (text: string, params: readonly unknown[]) => {
      statements += 1;
      return (await database.db.executeQuery(CompiledQuery.raw(text, [...params]))).rows as Record<
        string,
        unknown
      >[];
    };
    const timers = manualTimers();
    let now = T0;
    const solo: SoloLock = new SoloLock({
      url: postgresUrl(),
      schema,
      query,
      settled: () => budgets.settled(),
      now: () => now,
      timer: timers.timer,
      ...(waitMs !== undefined && { waitMs }),
    });
    const budgets = sharedBudgets(query, { solo });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await solo.close();
      await budgets.settled();
      await database.close();
    };
    onTestFinished(close);
    return {
      solo,
      budgets,
      timers,
      close,
      statements: () => statements,
      at: (t: number) => {
        now = t;
      },
    };
  };
  return { schema, read, locks, replica };
}

type SoloReplica = ReturnType<Awaited<ReturnType<typeof schemaForReplicas>>["replica"]>;

/** A lone replica, then a second one: once the first has handed over, both share the tables. */
async function twoSharing(replica: () => SoloReplica) {
  const a = replica();
  await a.solo.start();
  const b = replica();
  await b.solo.start();
  await a.solo.quiet();
  return [a, b] as const;
}

describe("the budgets of a replica alone on its database", () => {
  it("are kept in memory: its takes make no statement", async () => {
    const { replica } = await schemaForReplicas();
    const a = replica();
    await a.solo.start();
    expect(a.solo.mode).toBe("solo");
    const window = a.budgets.allowances(SCOPE, WINDOW);
    const bucket = a.budgets.allowances({ ...SCOPE, method: "chat.update" }, BUCKET);
    expect([1, 2, 3, 4].map(() => window.tryTake(T0))).toEqual([true, true, true, false]);
    expect(window.readyAt(T0)).toBe(T0 + SLACK_MINUTE_MS);
    expect([1, 2, 3].map(() => bucket.tryTake(T0))).toEqual([true, true, false]);
    expect(bucket.readyAt(T0)).toBe(T0 + 10_000);
    const slots = a.budgets.slotWindows(SLOTS, () => undefined, CLOCK);
    expect([slots.occupy(T0), slots.occupy(T0), slots.occupy(T0)]).toEqual([1, 2, undefined]);
    expect(a.statements()).toBe(0);
  });

  it("are handed to the tables when another replica comes, which counts what was spent", async () => {
    const { read, replica } = await schemaForReplicas();
    const a = replica();
    await a.solo.start();
    const mine = a.budgets.allowances(SCOPE, WINDOW);
    const bucket = a.budgets.allowances({ ...SCOPE, method: "chat.update" }, BUCKET);
    expect([mine.tryTake(T0), mine.tryTake(T0 + 100), bucket.tryTake(T0)]).toEqual([
      true,
      true,
      true,
    ]);
    mine.pauseUntil?.(T0 + 5_000);
    const b = replica();
    await b.solo.start();
    await a.solo.quiet();
    expect([a.solo.mode, b.solo.mode]).toEqual(["shared", "shared"]);
    const rows = await read<{ until_at: number; held: boolean }>(
      "SELECT until_at, held FROM budget_slots ORDER BY until_at",
    );
    expect(rows).toEqual([
      { until_at: T0 + SLACK_MINUTE_MS, held: false },
      { until_at: T0 + 100 + SLACK_MINUTE_MS, held: false },
    ]);
    expect(await read("SELECT key, arrival FROM budget_buckets")).toEqual([
      { key: "slack:T1:chat.update", arrival: T0 + 10_000 },
    ]);
    expect(await read("SELECT key, paused_until FROM budget_pauses")).toEqual([
      { key: "slack:T1:chat.startStream", paused_until: T0 + 5_000 },
    ]);
    // B sees the pause, then the one take the window has left.
    const theirs = b.budgets.allowances(SCOPE, WINDOW);
    expect(await take(theirs, T0 + 4_999)).toBe(false);
    expect(await take(theirs, T0 + 5_000)).toBe(true);
    expect(await take(theirs, T0 + 5_001)).toBe(false);
    // A's own budget is the same one now, kept in the tables.
    expect(await take(mine, T0 + 5_002)).toBe(false);
    expect(await take(mine, T0 + SLACK_MINUTE_MS + 1)).toBe(true);
  });

  it("carry a request's held slot into the tables, released there when the request ends", async () => {
    const { read, replica } = await schemaForReplicas();
    const a = replica();
    await a.solo.start();
    const slots = a.budgets.slotWindows(SLOTS, () => undefined, CLOCK);
    const held = slots.occupy(T0) as number;
    const b = replica();
    await b.solo.start();
    await a.solo.quiet();
    expect(await read("SELECT key, held FROM budget_slots")).toEqual([
      { key: "service:u-fingerprint:request", held: true },
    ]);
    slots.release(held, T0 + 1_000);
    // Releases gathered to go together are sent at once by a settle (slots.ts).
    await a.budgets.settled();
    expect(await read("SELECT held, until_at FROM budget_slots")).toEqual([
      { held: false, until_at: T0 + 1_000 + SLOTS.holdMs },
    ]);
  });

  it("are taken back into memory once the other replicas are gone, with what they spent", async () => {
    const { replica } = await schemaForReplicas();
    const [a, b] = await twoSharing(replica);
    const theirs = b.budgets.allowances(SCOPE, WINDOW);
    expect(await take(theirs, T0)).toBe(true);
    expect(await take(theirs, T0 + 1)).toBe(true);
    await b.close();
    // A looks whether it is alone now.
    a.at(T0 + 10);
    a.timers.fire();
    await a.solo.quiet();
    expect(a.solo.mode).toBe("solo");
    const before = a.statements();
    const mine = a.budgets.allowances(SCOPE, WINDOW);
    expect([mine.tryTake(T0 + 10), mine.tryTake(T0 + 11)]).toEqual([true, false]);
    expect(mine.readyAt(T0 + 11)).toBe(T0 + SLACK_MINUTE_MS);
    expect(a.statements()).toBe(before);
  });

  it("stay shared while a request of this replica holds a slot in the tables", async () => {
    const { replica } = await schemaForReplicas();
    const [a, b] = await twoSharing(replica);
    // As the service budget's lane does, the slot is taken when its take lands.
    let held: number | undefined;
    const slots = a.budgets.slotWindows(
      SLOTS,
      () => {
        held ??= slots.occupy(T0);
      },
      CLOCK,
    );
    expect(slots.occupy(T0)).toBeUndefined();
    await a.budgets.settled();
    expect(held).toBeDefined();
    await b.close();
    a.timers.fire();
    await a.solo.quiet();
    expect(a.solo.mode).toBe("shared");
    slots.release(held as number, T0 + 1_000);
    await a.budgets.settled();
    a.timers.fire();
    await a.solo.quiet();
    expect(a.solo.mode).toBe("solo");
    // The released slot counts its hold, in memory now.
    expect(slots.view(T0 + 1_000)).toMatchObject({ held: 0, freeAt: [T0 + 1_000 + SLOTS.holdMs] });
  });

  it("are written to the tables when the lone replica closes", async () => {
    const { read, replica } = await schemaForReplicas();
    const a = replica();
    await a.solo.start();
    const window = a.budgets.allowances(SCOPE, WINDOW);
    expect(window.tryTake(T0)).toBe(true);
    await a.close();
    expect(await read("SELECT key, until_at FROM budget_slots")).toEqual([
      { key: "slack:T1:chat.startStream", until_at: T0 + SLACK_MINUTE_MS },
    ]);
    const b = replica();
    await b.solo.start();
    expect(b.solo.mode).toBe("solo");
    const again = b.budgets.allowances(SCOPE, WINDOW);
    expect(takesAfter(again, T0, 3)).toEqual([true, true, false]);
  });

  it("stay in memory when the lock's connection is lost, and the lock is taken again", async () => {
    const { read, locks, replica } = await schemaForReplicas();
    const a = replica();
    await a.solo.start();
    const window = a.budgets.allowances(SCOPE, WINDOW);
    expect(window.tryTake(T0)).toBe(true);
    const [holder] = await locks("mode = 'ExclusiveLock'");
    await read("SELECT pg_terminate_backend($1)", [holder?.pid]);
    // Once the replica has seen its connection end: it will take the lock again (a timer).
    await expect.poll(() => a.timers.pending()).toBe(1);
    // Most likely alone still: the budgets go on in memory, with no statement.
    expect(a.solo.mode).toBe("solo");
    expect(window.tryTake(T0 + 1)).toBe(true);
    a.timers.fire();
    await a.solo.quiet();
    expect(a.solo.mode).toBe("solo");
    expect(await locks("mode = 'ExclusiveLock' AND granted")).toHaveLength(1);
    expect(takesAfter(window, T0 + 1, 2)).toEqual([true, false]);
    expect(a.statements()).toBe(0);
  });

  it("hand what was spent to a replica that took the lock while theirs was lost", async () => {
    const { read, locks, replica } = await schemaForReplicas();
    const a = replica();
    await a.solo.start();
    const mine = a.budgets.allowances(SCOPE, WINDOW);
    expect(takesAfter(mine, T0, 2)).toEqual([true, true]);
    const [holder] = await locks("mode = 'ExclusiveLock'");
    await read("SELECT pg_terminate_backend($1)", [holder?.pid]);
    // Once the replica has seen its connection end: it will take the lock again (a timer).
    await expect.poll(() => a.timers.pending()).toBe(1);
    const b = replica();
    await b.solo.start();
    expect(b.solo.mode).toBe("solo");
    // A takes the lock again: B holds it, so A writes what it spent and B hands over.
    a.timers.fire();
    await a.solo.quiet();
    await b.solo.quiet();
    expect([a.solo.mode, b.solo.mode]).toEqual(["shared", "shared"]);
    const theirs = b.budgets.allowances(SCOPE, WINDOW);
    expect(await take(theirs, T0 + 10)).toBe(true);
    expect(await take(theirs, T0 + 11)).toBe(false);
  });

  it("are not waited for past 30 s when the lone replica does not hand over", async () => {
    const { schema, read, locks, replica } = await schemaForReplicas();
    // A lone replica whose process hangs: the lock held, nobody listening.
    const lock = "$1, hashtext($2)";
    await read(`SELECT pg_advisory_lock(${lock})`, [SOLO_LOCK, schema]);
    const a = replica(50);
    const started = a.solo.start();
    const window = a.budgets.allowances(SCOPE, WINDOW);
    expect(window.tryTake(T0)).toBe(false);
    expect(a.solo.mode).toBe("switching");
    // Once it waits for the lock, its clock passes the 30 s.
    await expect.poll(async () => (await locks("NOT granted")).length).toBe(1);
    a.at(T0 + 30_000);
    await expect.poll(() => a.solo.mode).toBe("shared");
    expect(await take(window, T0 + 30_000)).toBe(true);
    // Once it lets go, the lock is held shared as any replica's that came.
    await read(`SELECT pg_advisory_unlock(${lock})`, [SOLO_LOCK, schema]);
    await started;
    expect(a.solo.mode).toBe("shared");
  });
});
