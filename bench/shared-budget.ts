/**
 * `npx tsx bench/shared-budget.ts [postgres-url] [--n N]`: what a budget shared by replicas in
 * PostgreSQL (budgets/postgres/) costs the thread that asks it, against a server (by
 * default the local one, postgres://postgres@127.0.0.1:5432/postgres), beside the in-memory
 * budgets for scale. Prints the median and p99 microseconds of:
 *
 * - a token bucket's tryTake, granted (one upsert) and refused (the same upsert, no row);
 * - its readyAt (one SELECT; asked at a new instant each time, so never from what was read);
 * - a sliding window's tryTake (BEGIN, the key's advisory lock, the insert, COMMIT) and readyAt;
 * - a service slot taken and released (the window's transaction, then one UPDATE);
 *
 * then how many calls a second one process can make through a call scheduler on shared
 * budgets: chat.postMessage posts to 50 channels through the post gate (each post takes the
 * workspace's token and its channel's), against a Slack that answers at once.
 *
 * It works in a schema of its own, dropped at the end; nothing else in the database is read.
 */
import { localAllowances } from "../src/budgets/local-allowances.js";
import { type SharedBudgets, sharedBudgets } from "../src/budgets/postgres/shared-budgets.js";
import { PostGate } from "../src/slack/calls/post-gate.js";
import { CallScheduler } from "../src/slack/calls/scheduler.js";
import { migratePostgres } from "../src/store/postgres/migrations.js";
import { SyncPostgres } from "../src/store/postgres/sync-client.js";
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
  const admin = new SyncPostgres(url);
  const db = new SyncPostgres(url, { schema });
  const done = () => {
    db.close();
    admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    admin.close();
  };
  try {
    await migratePostgres(url, schema);
    const shared = sharedBudgets(db);
    latencies(shared, n);
    await throughput(shared);
  } finally {
    done();
  }
}

/**
 * One µs figure per operation, each over `n` calls after a tenth as many to warm up. Each call
 * is asked at an instant of its own, moved on by as much as the budget needs to grant it, so
 * that the tables hold what a busy budget holds: a Tier 2 window its 20 takes of the last
 * minute, a token's request budget its 600 slots.
 */
function latencies(shared: SharedBudgets, n: number): void {
  let now = Date.now();
  const after = (ms: number) => {
    now += ms;
    return now;
  };
  // 60_000 a minute: a token every ms, so every take a ms apart is granted.
  const open = shared.allowances(SCOPE, { perMinute: 60_000, burst: 1 });
  const spent = shared.allowances({ ...SCOPE, method: "spent" }, { perMinute: 1, burst: 1 });
  spent.tryTake(now);
  const window = shared.allowances(
    { ...SCOPE, method: "chat.startStream" },
    { perMinute: 20, burst: 1, window: true },
  );
  const slots = shared.slotWindows({
    user: "token:bench",
    kind: "request",
    limit: 600,
    holdMs: 60_001,
  });
  const rows: [string, () => unknown][] = [
    ["bucket tryTake, granted", () => open.tryTake(after(1))],
    ["bucket tryTake, refused", () => spent.tryTake(after(1))],
    ["bucket readyAt", () => open.readyAt(after(1))],
    ["window (20/min) tryTake", () => window.tryTake(after(3_000))],
    ["window (20/min) readyAt", () => window.readyAt(after(1))],
    [
      "service slot (600/min) take+release",
      () => {
        const at = after(101);
        const id = slots.occupy(at);
        if (id !== undefined) slots.release(id, at);
      },
    ],
  ];
  const local = localAllowances(SCOPE, { perMinute: 60_000, burst: 1 });
  rows.push(["(in memory) bucket tryTake", () => local.tryTake(after(1))]);
  process.stdout.write(
    `  ${"".padEnd(36)} ${"median".padStart(8)} ${"p99".padStart(8)}  (µs, n=${n})\n`,
  );
  for (const [label, fn] of rows) {
    const times: number[] = [];
    for (let i = 0; i < n + n / 10; i++) {
      const started = performance.now();
      fn();
      if (i >= n / 10) times.push((performance.now() - started) * 1_000);
    }
    process.stdout.write(
      `  ${label.padEnd(36)} ${median(times).toFixed(0).padStart(8)} ${percentile(times, 99)
        .toFixed(0)
        .padStart(8)}\n`,
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
