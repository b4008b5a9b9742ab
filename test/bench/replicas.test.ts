/** The bench with --replicas: its arguments, the replicas' figures summed up, the comparison. */
import { describe, expect, it } from "vitest";
import { ArgsError, POSTGRES_OUT, parseArgs, REPLICAS_OUT } from "../../bench/args.js";
import { fleetFigures, replicaFigures } from "../../bench/replica-metrics.js";
import { compareRows } from "../../bench/replica-tables.js";
import { aggregate, type Row } from "../../bench/report.js";
import { rep } from "./rep-figures.js";

const metrics = (rss: number, cpu: number, completed: number, takeovers = 0) =>
  [
    `bridge_process_resident_memory_bytes ${rss}`,
    `bridge_process_peak_resident_memory_bytes ${rss * 2}`,
    `bridge_process_cpu_seconds_total ${cpu}`,
    `bridge_turns_total{outcome="completed"} ${completed}`,
    `bridge_conversation_takeovers_total ${takeovers}`,
    "bridge_shared_budget_waits_total 3",
  ].join("\n");

describe("bench --replicas", () => {
  it("defaults to one replica; with more, needs a postgres URL from the flag or the environment", () => {
    expect(parseArgs([])).toMatchObject({ replicas: 1, postgres: false, databaseUrl: undefined });
    const env = { TEST_DATABASE_URL: "postgres://t@127.0.0.1/p" };
    expect(parseArgs(["--replicas", "3"], env)).toMatchObject({
      replicas: 3,
      postgres: true,
      databaseUrl: "postgres://t@127.0.0.1/p",
      out: REPLICAS_OUT,
    });
    // One replica on PostgreSQL: its results beside, not over, the SQLite ones.
    expect(parseArgs(["--postgres"], env)).toMatchObject({
      replicas: 1,
      postgres: true,
      out: POSTGRES_OUT,
      compareWith: ["bench/results/latest.json"],
    });
    // Replicas are compared with one replica on the same database first, then on SQLite.
    expect(parseArgs(["--replicas", "3"], env).compareWith).toEqual([
      POSTGRES_OUT,
      "bench/results/latest.json",
    ]);
    const named = ["--replicas", "3", "--compare-with", "a.json", "--compare-with", "b.json"];
    expect(parseArgs(named, env).compareWith).toEqual(["a.json", "b.json"]);
    const both = { ...env, DATABASE_URL: "postgres://d@127.0.0.1/p" };
    expect(parseArgs(["--replicas=2"], both).databaseUrl).toBe("postgres://d@127.0.0.1/p");
    expect(
      parseArgs(
        ["--replicas", "2", "--database-url", "postgresql://f@h/p", "--out", "x.json"],
        both,
      ),
    ).toMatchObject({ databaseUrl: "postgresql://f@h/p", out: "x.json" });
    expect(() => parseArgs(["--replicas", "0"])).toThrow(ArgsError);
    expect(() => parseArgs(["--replicas", "2,3"])).toThrow(/one whole number/);
    expect(() => parseArgs(["--replicas", "11"])).toThrow(/from 1 to 10/);
    expect(() => parseArgs(["--database-url", "mysql://secret@h/db"])).toThrow(
      /^--database-url \(or DATABASE_URL, TEST_DATABASE_URL\) must be postgres/,
    );
  });

  it("sums CPU, turns and takeovers over the replicas, and keeps the largest one's memory", () => {
    const scrapes = [
      { idle: metrics(100, 1, 0), end: metrics(300, 2, 4), cpuBefore: 1, peakLeases: 2 },
      { idle: metrics(120, 1, 0), end: metrics(200, 1.5, 6, 1), cpuBefore: 1 },
    ];
    expect(fleetFigures(scrapes)).toMatchObject({
      idleRssBytes: 120,
      endRssBytes: 300,
      peakRssBytes: 600,
      cpuMs: 1500,
      outcomes: { completed: 10, failed: 0 },
      takeovers: 1,
      sharedBudgetWaits: 6,
    });
    const [first, second] = replicaFigures(scrapes);
    expect(first).toMatchObject({ replica: 1, cpuMs: 1000, turns: 4, peakLeases: 2 });
    expect(second).toMatchObject({ replica: 2, cpuMs: 500, turns: 6, takeovers: 1 });
  });

  it("compares each figure with one replica's row of the same scenario, in percent", () => {
    const one = [aggregate([rep({ wallSeconds: 20, slackCalls: 100, ackP99: 24 })])];
    const many = [
      aggregate([
        rep({ wallSeconds: 21, slackCalls: 100, replicas: 3, ackP99: 30 }),
        rep({ wallSeconds: 21, slackCalls: 100, replicas: 3, ackP99: 36 }),
      ]),
      aggregate([rep({ n: 50, wallSeconds: 99 })]),
    ];
    const list = compareRows(one, many);
    expect(list.find((c) => c.figure === "all shown s")).toEqual({
      n: 10,
      channels: 1,
      figure: "all shown s",
      one: 20,
      many: 21,
      diffPercent: 5,
    });
    expect(list.find((c) => c.figure === "Slack calls (all)")?.diffPercent).toBe(0);
    // Slack's acknowledgement is compared too, the worst repetition's p99 as a target reads it.
    expect(list.find((c) => c.figure === "ack p99 ms")).toMatchObject({ one: 24, many: 36 });
    // N = 50 was not run with one replica: nothing to compare.
    expect(list.every((c) => c.n === 10)).toBe(true);
  });

  it("compares the whole-word figures, and reads them as none from results written before", () => {
    const many = [
      aggregate([rep({ afterLastPieceP95: 300, askedCompleteP95: 9_900, ackMax: 30 })]),
    ];
    const now = compareRows([aggregate([rep({ afterLastPieceP95: 200 })])], many);
    expect(now.find((c) => c.figure === "after last piece p95 ms")).toMatchObject({
      one: 200,
      many: 300,
      diffPercent: 50,
    });
    expect(now.find((c) => c.figure === "question→complete p95 s")).toMatchObject({
      one: 9,
      many: 9.9,
    });
    expect(now.find((c) => c.figure === "ack max ms")).toMatchObject({ one: 12, many: 30 });
    // A latest.json from before: first text, no first word.
    const { firstWordP50: _a, firstWordP95: _b, ...old } = aggregate([rep({})]);
    const before = compareRows([{ ...old, firstTextP50: 300 } as unknown as Row], many);
    expect(before.find((c) => c.figure === "first word p50 ms")).toMatchObject({ one: Number.NaN });
    expect(before.find((c) => c.figure === "first word p50 ms")?.diffPercent).toBeNaN();
  });

  it("reads results written before --replicas as one replica's", () => {
    const old = rep({});
    expect(old.replicas).toBeUndefined();
    expect(aggregate([old])).toMatchObject({ replicas: 1, takeovers: 0 });
  });
});
