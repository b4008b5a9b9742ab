import type { Row } from "./report.js";
import { fixed, pad } from "./tables.js";

/**
 * The printed parts of a run with replicas: each replica's share, and the figures beside a
 * single replica's run of the same scenarios (a latest.json), with the difference.
 */

const joined = (row: Row, pick: (r: NonNullable<Row["perReplica"]>[number]) => string) =>
  (row.perReplica ?? []).map(pick).join("/");

/** One line per scenario: the replicas together, then each one's figures ("a/b/c"). */
export function formatReplicaTable(rows: readonly Row[]): string {
  const head = [
    "N",
    "channels",
    "replicas",
    "Slack calls",
    "takeovers",
    "budget waits",
    "turns each",
    "peak leases each",
    "peak RSS MB each",
    "CPU ms each",
  ];
  const body = rows.map((r) => [
    String(r.n),
    String(r.channels),
    String(r.replicas ?? 1),
    fixed(r.slackCalls ?? Number.NaN, 0),
    String(r.takeovers ?? 0),
    String(r.sharedBudgetWaits ?? 0),
    joined(r, (p) => String(p.turns)),
    joined(r, (p) => String(p.peakLeases)),
    joined(r, (p) => fixed(p.peakRssMb, 0)),
    joined(r, (p) => fixed(p.cpuMs, 0)),
  ]);
  return pad([head, ...body]);
}

/** A figure compared between one replica and several. */
export interface Comparison {
  n: number;
  channels: number;
  figure: string;
  one: number;
  many: number;
  /** (many - one) / one, in percent; NaN when one is 0 or either is not finite. */
  diffPercent: number;
}

/**
 * The figures a person sees, how soon Slack is answered, and what they cost in Slack calls:
 * the ones that must match.
 */
const COMPARED: [string, (r: Row) => number][] = [
  // Results written before these figures lack them: compared as none ("–").
  ["first word p50 ms", (r) => r.firstWordP50 ?? Number.NaN],
  ["first word p95 ms", (r) => r.firstWordP95 ?? Number.NaN],
  ["from question p50 ms", (r) => r.askedFirstWordP50 ?? Number.NaN],
  ["from question p95 ms", (r) => r.askedFirstWordP95 ?? Number.NaN],
  ["lag p95 s", (r) => r.lagP95Seconds],
  ["lag max s", (r) => r.lagMaxSeconds],
  ["after last piece p95 ms", (r) => r.afterLastPieceP95 ?? Number.NaN],
  ["question→complete p50 s", (r) => (r.askedCompleteP50 ?? Number.NaN) / 1000],
  ["question→complete p95 s", (r) => (r.askedCompleteP95 ?? Number.NaN) / 1000],
  ["all shown s", (r) => r.wallSeconds],
  ["Slack calls/answer", (r) => r.slackCallsPerAnswer],
  ["Slack calls (all)", (r) => r.slackCalls ?? Number.NaN],
  ["exact %", (r) => r.fidelity * 100],
  ["ack p50 ms", (r) => r.ackP50],
  ["ack p99 ms", (r) => r.ackP99],
  ["ack max ms", (r) => r.ackMax ?? Number.NaN],
];

/** Every compared figure of each scenario run both ways (matched on N and channels). */
export function compareRows(one: readonly Row[], many: readonly Row[]): Comparison[] {
  const out: Comparison[] = [];
  for (const m of many) {
    const o = one.find((r) => r.n === m.n && r.channels === m.channels);
    if (!o) continue;
    for (const [figure, pick] of COMPARED) {
      const [a, b] = [pick(o), pick(m)];
      const diffPercent =
        Number.isFinite(a) && Number.isFinite(b) && a !== 0 ? ((b - a) / a) * 100 : Number.NaN;
      out.push({ n: m.n, channels: m.channels, figure, one: a, many: b, diffPercent });
    }
  }
  return out;
}

/** The comparison as a table, the two runs headed by `names` (the one compared with first). */
export function formatComparison(list: readonly Comparison[], names: [string, string]): string {
  const head = ["N", "channels", "figure", ...names, "diff"];
  const body = list.map((c) => [
    String(c.n),
    String(c.channels),
    c.figure,
    fixed(c.one, 1),
    fixed(c.many, 1),
    Number.isNaN(c.diffPercent)
      ? "–"
      : `${c.diffPercent >= 0 ? "+" : ""}${c.diffPercent.toFixed(0)}%`,
  ]);
  return pad([head, ...body]);
}
