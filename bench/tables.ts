import type { Row } from "./report.js";
import { byMethod } from "./targets.js";

/** The printed tables of a run: one row per scenario, figures with their floors and costs. */

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : value > 0 ? "∞" : "–";
}

/**
 * Ours against the floor, "×1.4"; "–" where the floor is under `meaningful` (then network
 * and process jitter, not Slack, decide the figure, and a ratio says nothing).
 */
export function ratio(ours: number, floor: number, meaningful: number): string {
  if (!(floor >= meaningful) || !Number.isFinite(ours)) return "–";
  return `×${(ours / floor).toFixed(1)}`;
}

type Column = [string, (row: Row) => string];

const SCENARIO: Column[] = [
  ["N", (r) => String(r.n)],
  ["channels", (r) => String(r.channels)],
  ["reps", (r) => String(r.reps)],
];

const pair = (a: number, b: number, digits: number) => `${fixed(a, digits)} / ${fixed(b, digits)}`;

/** When a person sees the first complete word, with Slack's floor and our ratio to it. */
const FIRST_WORD: Column[] = [
  ...SCENARIO,
  ["1st word p50/p95 ms", (r) => pair(r.firstWordP50, r.firstWordP95, 0)],
  ["from question", (r) => pair(r.askedFirstWordP50, r.askedFirstWordP95, 0)],
  ["floor p50/p95", (r) => pair(r.floor.firstTextP50, r.floor.firstTextP95, 0)],
  ["p95 ×floor", (r) => ratio(r.askedFirstWordP95, r.floor.firstTextP95, 100)],
  ["outside p50/p95", (r) => pair(r.outsideFirstWordP50, r.outsideFirstWordP95, 0)],
];

/** How the rest of the answer follows the written text, and when it is complete. */
const WHOLE_ANSWER: Column[] = [
  ...SCENARIO,
  ["lag p95/max s", (r) => pair(r.lagP95Seconds, r.lagMaxSeconds, 1)],
  ["max floor", (r) => fixed(r.floor.lagMaxSeconds, 1)],
  ["max ×floor", (r) => ratio(r.lagMaxSeconds, r.floor.lagMaxSeconds, 0.1)],
  ["after last piece p50/p95 ms", (r) => pair(r.afterLastPieceP50, r.afterLastPieceP95, 0)],
  [
    "question→complete p50/p95 s",
    (r) => pair(r.askedCompleteP50 / 1000, r.askedCompleteP95 / 1000, 1),
  ],
  ["all shown s", (r) => fixed(r.wallSeconds, 1)],
  ["floor", (r) => fixed(r.floor.wallSeconds, 1)],
  ["shown ×floor", (r) => ratio(r.wallSeconds, r.floor.wallSeconds, 0.1)],
];

/** What the answers cost and how they ended. */
const COST: Column[] = [
  ...SCENARIO,
  ["ack p50/p99/max ms", (r) => `${pair(r.ackP50, r.ackP99, 1)} / ${fixed(r.ackMax, 1)}`],
  ["Slack calls/ans", (r) => fixed(r.slackCallsPerAnswer, 1)],
  ["429 Slack/svc", (r) => `${r.slack429} / ${r.service429}`],
  ["exact", (r) => `${fixed(r.fidelity * 100, 0)}%`],
  ["unsettled", (r) => String(r.unsettled)],
  ["peak RSS MB", (r) => fixed(r.peakRssMb, 0)],
  ["CPU ms/ans", (r) => fixed(r.cpuMsPerAnswer, 1)],
  ["Slack 429s by method", (r) => byMethod(r.slack429ByMethod) || "–"],
];

/** A plain-text table, one row per scenario, columns padded to fit. */
function table(columns: readonly Column[], rows: readonly Row[]): string {
  return pad([columns.map(([title]) => title), ...rows.map((r) => columns.map(([, f]) => f(r)))]);
}

/** Rows of cells (the first one the heading) as a plain-text table, columns padded to fit. */
export function pad(cells: string[][]): string {
  const widths = (cells[0] ?? []).map((_, i) =>
    Math.max(...cells.map((line) => (line[i] ?? "").length)),
  );
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padStart(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  const [head, ...body] = cells;
  return [line(head ?? []), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join(
    "\n",
  );
}

/**
 * The tables: what a person sees (the first word, then the whole answer; in whole words,
 * against the floor Slack's limits allow), then what it costs.
 */
export function formatTables(rows: readonly Row[]): string {
  return [
    "What a person sees first, in whole words, against the floor Slack's limits allow for the workload:",
    table(FIRST_WORD, rows),
    "",
    "How the whole answer follows the service's writing, against the floor:",
    table(WHOLE_ANSWER, rows),
    "",
    "What it costs:",
    table(COST, rows),
  ].join("\n");
}

/**
 * The bot beside Slack's own agent template, scenario by scenario (rows in the same order):
 * the figures issue #20 compares, "ours | template".
 */
export function formatAgainstTemplate(ours: readonly Row[], template: readonly Row[]): string {
  const both = (f: (r: Row) => string) => (i: number) =>
    `${f(ours[i] as Row)} | ${template[i] ? f(template[i] as Row) : "–"}`;
  const columns: [string, (i: number) => string][] = [
    ["N", (i) => String(ours[i]?.n)],
    ["channels", (i) => String(ours[i]?.channels)],
    ["1st word p95 ms", both((r) => fixed(r.firstWordP95, 0))],
    ["after last piece p95 ms", both((r) => fixed(r.afterLastPieceP95, 0))],
    ["lag max s", both((r) => fixed(r.lagMaxSeconds, 1))],
    [
      "question→complete p50/p95 s",
      both((r) => pair(r.askedCompleteP50 / 1000, r.askedCompleteP95 / 1000, 1)),
    ],
    ["Slack 429s", both((r) => String(r.slack429))],
    ["ack p50/max ms", both((r) => pair(r.ackP50, r.ackMax, 0))],
    ["Slack calls/ans", both((r) => fixed(r.slackCallsPerAnswer, 1))],
  ];
  return pad([
    columns.map(([title]) => title),
    ...ours.map((_, i) => columns.map(([, f]) => f(i))),
  ]);
}
