/**
 * `npx tsx bench/pg-store.ts [postgres-url] [--turns N]`: how long the PostgreSQL stores
 * (on `pg`'s pool, store/postgres/open.ts) take to answer, against a server (by
 * default the local one, postgres://postgres@127.0.0.1:5432/postgres), beside SQLite on this
 * machine's disk for scale. Prints the median and p99 ms of:
 *
 * - a round trip: `ping()`, one `SELECT 1`;
 * - a turn transition: one `TurnStore` event (one conditional UPDATE from the version this
 *   process last wrote: one round trip), each of the seven a turn goes through from composed
 *   to finished;
 * - a conversation lookup: `conversations.find` of a thread, among as many as there are turns.
 *
 * It works in a schema of its own, dropped at the end; nothing else in the database is read.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { openPostgresStores } from "../src/store/postgres/open.js";
import { openSqliteStores } from "../src/store/sqlite/open.js";
import type { Stores } from "../src/store/stores.js";
import { median, percentile } from "./stats.js";

interface Timings {
  roundTrip: number[];
  transition: number[];
  lookup: number[];
}

/** Turns (each seven transitions) and conversations measured; the first tenth warms up. */
const DEFAULT_TURNS = 1_000;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const turnsAt = argv.indexOf("--turns");
  const turns = turnsAt >= 0 ? Number(argv[turnsAt + 1]) : DEFAULT_TURNS;
  const url =
    argv.find((arg, i) => !arg.startsWith("--") && argv[i - 1] !== "--turns") ??
    "postgres://postgres@127.0.0.1:5432/postgres";

  const schema = `bench_${process.pid}_${Date.now().toString(36)}`;
  try {
    const postgres = openPostgresStores(url, Date.now, { schema });
    report("PostgreSQL", await measure(postgres, turns));
    await postgres.close();
  } finally {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }

  const dir = mkdtempSync(join(tmpdir(), "pg-store-bench-"));
  try {
    const sqlite = openSqliteStores(join(dir, "bridge.db"));
    report("SQLite (synchronous FULL)", await measure(sqlite, turns));
    await sqlite.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(stores: Stores, turns: number): Promise<Timings> {
  const timings: Timings = { roundTrip: [], transition: [], lookup: [] };
  const warmup = Math.floor(turns / 10);
  for (let i = 0; i < turns; i++) {
    const keep = i >= warmup;
    const key = { team: "T", channel: `C${i % 20}`, threadTs: `${1_700_000_000 + i}.000100` };
    const conversation = await stores.conversations.ensure(key, "asst");
    const turn = (
      await stores.turns.record({
        conversation: conversation,
        assistant: conversation.assistantId,
        ...key,
        messageTs: key.threadTs,
        user: `U${i % 50}`,
        content: "What is the capital of France?",
        notes: [],
      })
    ).turn;
    if (!turn) throw new Error("the turn was not recorded");
    const id = turn.id;
    const steps: (() => Promise<unknown>)[] = [
      () =>
        stores.turns.recordContent(id, { serviceContent: "q", contextThroughTs: null, notes: [] }),
      () => stores.turns.recordPostAttempt(id),
      () => stores.turns.recordMessage(id, `m-${i}`),
      () => stores.turns.recordRunAttempt(id, {}),
      () => stores.turns.recordRunStart(id, { runId: `r-${i}`, startedAt: Date.now() }),
      () => stores.turns.recordReply(id, ["1.2"]),
      () => stores.turns.finish(id, { outcome: "completed", modelUsed: "m" }),
    ];
    for (const step of steps) await time(step, keep ? timings.transition : undefined);
    const earlier = Math.floor(Math.random() * (i + 1));
    const lookupKey = {
      team: "T",
      channel: `C${earlier % 20}`,
      threadTs: `${1_700_000_000 + earlier}.000100`,
    };
    await time(() => stores.conversations.find(lookupKey), keep ? timings.lookup : undefined);
    await time(() => stores.ping(), keep ? timings.roundTrip : undefined);
  }
  return timings;
}

/** How long `fn`'s promise takes to settle, ms, kept in `into`. */
async function time(fn: () => Promise<unknown>, into: number[] | undefined): Promise<void> {
  const started = performance.now();
  await fn();
  into?.push(performance.now() - started);
}

function report(name: string, timings: Timings): void {
  const row = (label: string, values: number[]) =>
    `  ${label.padEnd(24)} ${median(values).toFixed(3).padStart(8)} ${percentile(values, 99)
      .toFixed(3)
      .padStart(8)} ${String(values.length).padStart(7)}`;
  process.stdout.write(
    [
      `${name}`,
      `  ${"".padEnd(24)} ${"median".padStart(8)} ${"p99".padStart(8)} ${"n".padStart(7)}  (ms)`,
      row("round trip (ping)", timings.roundTrip),
      row("turn transition", timings.transition),
      row("conversation lookup", timings.lookup),
      "",
    ].join("\n"),
  );
}

await main();
