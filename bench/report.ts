import { cpus, totalmem } from "node:os";
import type { BenchOptions } from "./args.js";
import type { ScenarioResult } from "./scenario.js";
import { fidelity, max, median, percentile } from "./stats.js";

/** The figures of one repetition. Times in ms unless named otherwise. */
export interface RepFigures {
  n: number;
  rep: number;
  wallSeconds: number;
  ackP50: number;
  ackP99: number;
  firstVisibleP50: number;
  firstVisibleP95: number;
  stalenessP95Seconds: number;
  stalenessMaxSeconds: number;
  staleCharsP95: number;
  slackCallsPerAnswer: number;
  slack429: number;
  service429: number;
  /** Share of answers shown exactly, 0–1. */
  fidelity: number;
  peakRssMb: number;
  /** RSS once ready, before the first question, and at the end. */
  idleRssMb: number;
  endRssMb: number;
  endHeapUsedMb: number;
  cpuMsPerAnswer: number;
  unsettled: number;
  meanAnswerChars: number;
}

const MB = 1024 * 1024;

export function repFigures(r: ScenarioResult): RepFigures {
  const mean = (values: number[]) =>
    values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
  return {
    n: r.n,
    rep: r.rep,
    wallSeconds: r.wallMs / 1000,
    ackP50: percentile(r.ackMs, 50),
    ackP99: percentile(r.ackMs, 99),
    firstVisibleP50: percentile(r.firstVisibleMs, 50),
    firstVisibleP95: percentile(r.firstVisibleMs, 95),
    stalenessP95Seconds: percentile(r.lagMs, 95) / 1000,
    stalenessMaxSeconds: max(r.lagMs) / 1000,
    staleCharsP95: percentile(r.lagChars, 95),
    slackCallsPerAnswer: r.slackReplyCalls / r.n,
    slack429: r.slack429,
    service429: r.service429,
    fidelity: fidelity(r.exact),
    peakRssMb: r.peakRssBytes / MB,
    idleRssMb: r.idleRssBytes / MB,
    endRssMb: r.endRssBytes / MB,
    endHeapUsedMb: r.endHeapUsedBytes / MB,
    cpuMsPerAnswer: r.cpuMs / r.n,
    unsettled: r.unsettled,
    meanAnswerChars: mean(r.answerChars),
  };
}

/**
 * One row per N: the median of each figure over the repetitions, except the ones a target
 * is about, which take the worst repetition: 429s (max), fidelity (min), peak RSS (max).
 */
export function aggregate(reps: readonly RepFigures[]): RepFigures & { reps: number } {
  const first = reps[0];
  if (!first) throw new Error("no repetitions to aggregate");
  const med = (pick: (f: RepFigures) => number) => median(reps.map(pick));
  const worst = (pick: (f: RepFigures) => number) => max(reps.map(pick));
  return {
    n: first.n,
    rep: 0,
    reps: reps.length,
    wallSeconds: med((f) => f.wallSeconds),
    ackP50: med((f) => f.ackP50),
    ackP99: med((f) => f.ackP99),
    firstVisibleP50: med((f) => f.firstVisibleP50),
    firstVisibleP95: med((f) => f.firstVisibleP95),
    stalenessP95Seconds: med((f) => f.stalenessP95Seconds),
    stalenessMaxSeconds: med((f) => f.stalenessMaxSeconds),
    staleCharsP95: med((f) => f.staleCharsP95),
    slackCallsPerAnswer: med((f) => f.slackCallsPerAnswer),
    slack429: worst((f) => f.slack429),
    service429: worst((f) => f.service429),
    fidelity: Math.min(...reps.map((f) => f.fidelity)),
    peakRssMb: worst((f) => f.peakRssMb),
    idleRssMb: med((f) => f.idleRssMb),
    endRssMb: med((f) => f.endRssMb),
    endHeapUsedMb: med((f) => f.endHeapUsedMb),
    cpuMsPerAnswer: med((f) => f.cpuMsPerAnswer),
    unsettled: worst((f) => f.unsettled),
    meanAnswerChars: med((f) => f.meanAnswerChars),
  };
}

const COLUMNS: [string, (row: RepFigures & { reps: number }) => string][] = [
  ["N", (r) => String(r.n)],
  ["reps", (r) => String(r.reps)],
  ["ack p50/p99 ms", (r) => `${fixed(r.ackP50, 1)} / ${fixed(r.ackP99, 1)}`],
  ["1st text p50/p95 ms", (r) => `${fixed(r.firstVisibleP50, 0)} / ${fixed(r.firstVisibleP95, 0)}`],
  [
    "stale p95/max s",
    (r) => `${fixed(r.stalenessP95Seconds, 1)} / ${fixed(r.stalenessMaxSeconds, 1)}`,
  ],
  ["stale chars p95", (r) => fixed(r.staleCharsP95, 0)],
  ["Slack calls/ans", (r) => fixed(r.slackCallsPerAnswer, 1)],
  ["429 Slack/svc", (r) => `${r.slack429} / ${r.service429}`],
  ["exact", (r) => `${fixed(r.fidelity * 100, 0)}%`],
  ["peak RSS MB", (r) => fixed(r.peakRssMb, 0)],
  ["CPU ms/ans", (r) => fixed(r.cpuMsPerAnswer, 1)],
  ["wall s", (r) => fixed(r.wallSeconds, 0)],
];

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "–";
}

/** A plain-text table, one row per N, columns padded to fit. */
export function formatTable(rows: readonly (RepFigures & { reps: number })[]): string {
  const cells = [COLUMNS.map(([title]) => title), ...rows.map((r) => COLUMNS.map(([, f]) => f(r)))];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((line) => (line[i] ?? "").length)));
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

/** What the printed output and the JSON say about how the figures were made. */
export function methodNotes(o: BenchOptions): string[] {
  return [
    `Service run-start limit raised to ${o.runStartsPerMinute}/min in the simulator AND the bot (ASSISTANT_RUN_STARTS_PER_MINUTE); the real service allows 20/min per token. Other requests keep the real 600/min.`,
    `Fake Slack enforces Slack's tiers (chat.update 50/min per workspace, chat.postMessage ~1/s per channel); the bot paces at its defaults (40 edits/min). Every answer needs at least one final edit from that shared budget, so N answers take at least N x 1.5 s to finish (N=200: 5 min) and staleness grows with N.`,
    `Answers: ${o.minChars}-${o.maxChars} characters of Markdown, written at ${o.tokensPerSecond} tokens/s (~4-character chunks); questions arrive at ${o.arrivalsPerSecond}/s over ${o.channels} channels from ${o.users} people, one workspace.`,
    "First text: the fake Slack's first chat.postMessage/chat.update carrying answer text for that reply, minus the simulator's first chunk.",
    `Staleness: every ${o.sampleMs} ms, each live reply's visible Markdown vs the text the service had written; time lag = age of the visible text.`,
    `The bot runs in its own process (${o.runtime === "compiled" ? "the tsc build under plain node, as npm start runs it" : "node --import tsx src/main.ts"}; LOG_LEVEL=info), fresh for each repetition with a fresh fake Slack and simulator; RSS and CPU come from its /metrics (CPU counted from ready to the last answer).`,
    "Rows: median over repetitions; 429s, peak RSS and exact: the worst repetition.",
  ];
}

export function machine(): Record<string, unknown> {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model ?? "unknown",
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}
