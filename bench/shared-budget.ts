/**
 * `npx tsx bench/shared-budget.ts [postgres-url] [--n N]`: what a budget shared by replicas in
 * PostgreSQL (budgets/postgres/) costs, against a server (by default the local one,
 * postgres://postgres@127.0.0.1:5432/postgres), beside the in-memory budgets for scale. A take
 * is asked one round trip ahead of its call (budgets/postgres/ahead.ts), so two figures:
 *
 * - "thread": what the asking itself holds the event loop, µs (median and p99);
 * - "lands": from the ask until the take is in hand (or refused), µs: the round trip a call
 *   waits for its budget, during which the event loop is free;
 *
 * for a token bucket's take, granted (one upsert) and refused (the same upsert, no row), a
 * sliding window's take (the key's advisory lock and the insert in one function), and a
 * service slot taken and released; then how many calls a second one process can make through
 * a call scheduler on shared budgets: chat.postMessage posts to 50 channels through the post
 * gate (each post takes the workspace's token and its channel's), against a Slack that
 * answers at once.
 *
 * It works in a schema of its own, dropped at the end; nothing else in the database is read.
 */
import { CompiledQuery } from "kysely";
import pg from "pg";
import type { Allowance } from "../src/budgets/allowance.js";
import { localAllowances } from "../src/budgets/local-allowances.js";
import { type SharedBudgets, sharedBudgets } from "../src/budgets/postgres/shared-budgets.js";
import { PostGate } from "../src/slack/calls/post-gate.js";
import { CallScheduler } from "../src/slack/calls/scheduler.js";
import { migratePostgres } from "../src/store/postgres/migrations.js";
import { postgresDatabase } from "../src/store/sql/postgres-pool.js";
import { systemClock } from "../src/time.js";
import { median, percentile } from "./stats.js";

const DEFAULT_N = 5_000;
/** How long the throughput runs last, ms. */
const THROUGHPUT_MS = 3_000;
const SCOPE = { team: "T1", method: "chat.update" };

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const nAt = argv.indexOf("--n");
  const n = nAt >= 0 ? Number(argv[nAt + 1]) : DEFAULT_N;
  const url =
    argv.find((arg, i) => !arg.startsWith("--") && argv[i - 1] !== "--n") ??
    "postgres://postgres@127.0.0.1:5432/postgres";
  const schema = `bench_${process.pid}_${Date.now().toString(36)}`;
  const database = postgresDatabase(url, { schema, max: 2 });
  try {
    await migratePostgres(url, schema);
    const shared = sharedBudgets(async (text, params) => {
      const result = await database.db.executeQuery(CompiledQuery.raw(text, [...params]));
      return result.rows as Record<string, unknown>[];
    });
    await latencies(shared, n);
    await throughput(shared);
    await shared.settled();
  } finally {
    await database.close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

/** Once what `budget` asked of the database has landed. */
async function landed(budget: unknown): Promise<void> {
  await (budget as { settled?: () => Promise<void> }).settled?.();
}

/** Asks `allowance` for a take at `now`, as the scheduler does: the time the thread was held. */
function ask(allowance: Allowance, now: number): number {
  const started = performance.now();
  allowance.tryTake(now);
  return performance.now() - started;
}

/**
 * Two µs figures per operation (the thread, until it lands), each over `n` takes after a
 * tenth as many to warm up. Each take is asked at an instant of its own, moved on by as much
 * as the budget needs to grant it, so that the tables hold what a busy budget holds: a Tier 2
 * window its 20 takes of the last minute, a token's request budget its 600 slots.
 */
async function latencies(shared: SharedBudgets, n: number): Promise<void> {
  let now = Date.now();
  const after = (ms: number) => {
    now += ms;
    return now;
  };
  // 60_000 a minute: a token every ms, so every take a ms apart is granted.
  const open = shared.allowances(SCOPE, { perMinute: 60_000, burst: 1 });
  const spent = shared.allowances({ ...SCOPE, method: "spent" }, { perMinute: 1, burst: 1 });
  spent.tryTake(now);
  await landed(spent);
  const window = shared.allowances(
    { ...SCOPE, method: "chat.startStream" },
    { perMinute: 20, burst: 1, window: true },
  );
  const slots = shared.slotWindows(
    { user: "token:bench", kind: "request", limit: 600, holdMs: 60_001 },
    () => undefined,
    systemClock,
  );
  /** Each operation: the thread's part, then what lands later (awaited). */
  const rows: [string, () => number, () => Promise<unknown>][] = [
    ["bucket take, granted", () => ask(open, after(1)), () => landed(open)],
    // Spent: what the first refusal taught of the next token answers, without a round trip.
    ["bucket take, spent (from memory)", () => ask(spent, after(0)), () => landed(spent)],
    ["window (20/min) take", () => ask(window, after(3_000)), () => landed(window)],
    [
      "service slot (600/min) take",
      () => {
        const started = performance.now();
        slots.occupy(after(101));
        return performance.now() - started;
      },
      () => landed(slots),
    ],
  ];
  const local = localAllowances(SCOPE, { perMinute: 60_000, burst: 1 });
  rows.push(["(in memory) bucket take", () => ask(local, after(1)), async () => undefined]);
  const heading = `${"thread".padStart(8)} ${"p99".padStart(8)} ${"lands".padStart(8)} ${"p99".padStart(8)}`;
  process.stdout.write(`  ${"".padEnd(30)} ${heading}  (µs, n=${n})\n`);
  for (const [label, thread, lands] of rows) {
    const held: number[] = [];
    const waited: number[] = [];
    for (let i = 0; i < n + n / 10; i++) {
      const started = performance.now();
      const ms = thread();
      await lands();
      if (i < n / 10) continue;
      held.push(ms * 1_000);
      waited.push((performance.now() - started) * 1_000);
    }
    const figures = [median(held), percentile(held, 99), median(waited), percentile(waited, 99)];
    process.stdout.write(
      `  ${label.padEnd(30)} ${figures.map((f) => f.toFixed(0).padStart(8)).join(" ")}\n`,
    );
  }
}

/** Posts a second through one scheduler's post gate, shared budgets and in memory. */
async function throughput(shared: SharedBudgets): Promise<void> {
  for (const [label, allowances] of [
    ["shared in PostgreSQL", shared.allowances],
    ["in memory", localAllowances],
  ] as const) {
    const perSecond = await postsPerSecond(allowances);
    process.stdout.write(`  posts/s, ${label.padEnd(27)} ${perSecond.toFixed(0).padStart(8)}\n`);
  }
}

async function postsPerSecond(allowances: SharedBudgets["allowances"]): Promise<number> {
  const scheduler = new CallScheduler({ allowances });
  // Budgets far above what one process can spend: the figure is the budgets' own cost.
  const gate = new PostGate({
    scheduler,
    perSecond: 1_000_000,
    burst: 1_000,
    workspacePerMinute: 60_000_000,
    workspaceBurst: 1_000,
  });
  const started = performance.now();
  let posted = 0;
  const keepPosting = async (channel: string): Promise<void> => {
    while (performance.now() - started < THROUGHPUT_MS) {
      await gate.post({ team: "T1", channel }, async () => ({ ok: true }));
      posted++;
    }
  };
  await Promise.all(Array.from({ length: 50 }, (_, i) => keepPosting(`C${i}`)));
  const elapsed = performance.now() - started;
  gate.close();
  scheduler.close();
  return (posted * 1_000) / elapsed;
}

await main();
