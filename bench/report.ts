import { cpus, totalmem } from "node:os";
import type { BenchOptions } from "./args.js";
import type { ReplicaFigures } from "./replica-metrics.js";
import { fidelity, max, median, percentile } from "./stats.js";
import type { ScenarioResult } from "./summary.js";

/** What Slack's limits allow at best, in the units of the figure beside it. */
export interface FloorFigures {
  firstTextP50: number;
  firstTextP95: number;
  lagMaxSeconds: number;
  wallSeconds: number;
}

/** The figures of one repetition. Times in ms unless named otherwise. */
export interface RepFigures {
  n: number;
  channels: number;
  rep: number;
  /** From the first question until every answer was readable whole in Slack. */
  wallSeconds: number;
  ackP50: number;
  ackP99: number;
  firstTextP50: number;
  firstTextP95: number;
  /** The same two from the person's question reaching Slack (what the floor bounds). */
  askedFirstTextP50: number;
  askedFirstTextP95: number;
  /** The same two by the outside view, and the largest difference for one answer. */
  outsideFirstTextP50: number;
  outsideFirstTextP95: number;
  outsideDisagreementMs: number;
  lagP95Seconds: number;
  lagMaxSeconds: number;
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
  floor: FloorFigures;
  /**
   * Added with --replicas; absent in results written before (read as one replica). Copies
   * of the bot that shared the work; RSS figures above are then the largest replica's, CPU
   * all of theirs.
   */
  replicas?: number;
  /** Every Slack call (reads included), all replicas together. */
  slackCalls?: number;
  /** The same by method; a row: each method's median over the repetitions. */
  slackCallsByMethod?: Record<string, number>;
  takeovers?: number;
  sharedBudgetWaits?: number;
  /** Each replica's figures (a row: those of its last repetition). */
  perReplica?: ReplicaFigures[];
}

export type Row = RepFigures & { reps: number };

const MB = 1024 * 1024;

export function repFigures(r: ScenarioResult): RepFigures {
  const mean = (values: number[]) =>
    values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
  return {
    n: r.n,
    channels: r.channels,
    rep: r.rep,
    wallSeconds: r.wallMs / 1000,
    ackP50: percentile(r.ackMs, 50),
    ackP99: percentile(r.ackMs, 99),
    // An answer that never showed text counts as the slowest there could be.
    firstTextP50: percentile(withMissing(r.firstTextMs, r.n), 50),
    firstTextP95: percentile(withMissing(r.firstTextMs, r.n), 95),
    askedFirstTextP50: percentile(withMissing(r.askedFirstTextMs, r.n), 50),
    askedFirstTextP95: percentile(withMissing(r.askedFirstTextMs, r.n), 95),
    outsideFirstTextP50: percentile(withMissing(r.outsideFirstTextMs, r.n), 50),
    outsideFirstTextP95: percentile(withMissing(r.outsideFirstTextMs, r.n), 95),
    outsideDisagreementMs: r.outsideDisagreementMs,
    lagP95Seconds: percentile(r.lagMs, 95) / 1000,
    lagMaxSeconds: max(r.lagMaxMs) / 1000,
    slackCallsPerAnswer: r.slackWriteCalls / r.n,
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
    replicas: r.replicas,
    slackCalls: r.slackCalls,
    slackCallsByMethod: r.slackCallsByMethod,
    takeovers: r.takeovers,
    sharedBudgetWaits: r.sharedBudgetWaits,
    perReplica: r.perReplica,
    floor: {
      firstTextP50: r.floors.firstTextP50Ms,
      firstTextP95: r.floors.firstTextP95Ms,
      lagMaxSeconds: r.floors.lagMaxMs / 1000,
      wallSeconds: r.floors.allShownMs / 1000,
    },
  };
}

function withMissing(values: readonly number[], n: number): number[] {
  return [...values, ...new Array(Math.max(0, n - values.length)).fill(Number.POSITIVE_INFINITY)];
}

/**
 * One row per scenario: the median of each figure over the repetitions, except those a
 * target is about, which take the worst repetition: first text p95s, lag max, ack p99, 429s,
 * fidelity (min), the outside view's disagreement, peak RSS and unsettled answers (max).
 */
export function aggregate(reps: readonly RepFigures[]): Row {
  const first = reps[0];
  if (!first) throw new Error("no repetitions to aggregate");
  const med = (pick: (f: RepFigures) => number) => median(reps.map(pick));
  const worst = (pick: (f: RepFigures) => number) => max(reps.map(pick));
  return {
    n: first.n,
    channels: first.channels,
    rep: 0,
    reps: reps.length,
    wallSeconds: med((f) => f.wallSeconds),
    ackP50: med((f) => f.ackP50),
    ackP99: worst((f) => f.ackP99),
    firstTextP50: med((f) => f.firstTextP50),
    firstTextP95: worst((f) => f.firstTextP95),
    askedFirstTextP50: med((f) => f.askedFirstTextP50),
    askedFirstTextP95: worst((f) => f.askedFirstTextP95),
    outsideFirstTextP50: med((f) => f.outsideFirstTextP50),
    outsideFirstTextP95: worst((f) => f.outsideFirstTextP95),
    outsideDisagreementMs: worst((f) => f.outsideDisagreementMs),
    lagP95Seconds: med((f) => f.lagP95Seconds),
    lagMaxSeconds: worst((f) => f.lagMaxSeconds),
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
    replicas: first.replicas ?? 1,
    slackCalls: med((f) => f.slackCalls ?? Number.NaN),
    slackCallsByMethod: medianByMethod(reps),
    takeovers: worst((f) => f.takeovers ?? 0),
    sharedBudgetWaits: med((f) => f.sharedBudgetWaits ?? 0),
    ...lastPerReplica(reps),
    floor: {
      firstTextP50: med((f) => f.floor.firstTextP50),
      firstTextP95: med((f) => f.floor.firstTextP95),
      lagMaxSeconds: med((f) => f.floor.lagMaxSeconds),
      wallSeconds: med((f) => f.floor.wallSeconds),
    },
  };
}

/** Each method's median number of calls, a repetition without it counting none. */
function medianByMethod(reps: readonly RepFigures[]): Record<string, number> {
  const methods = new Set(reps.flatMap((f) => Object.keys(f.slackCallsByMethod ?? {})));
  return Object.fromEntries(
    [...methods].sort().map((m) => [m, median(reps.map((f) => f.slackCallsByMethod?.[m] ?? 0))]),
  );
}

function lastPerReplica(reps: readonly RepFigures[]): { perReplica?: ReplicaFigures[] } {
  const last = reps.at(-1)?.perReplica;
  return last ? { perReplica: last } : {};
}

/** What the printed output and the JSON say about how the figures were made. */
export function methodNotes(o: BenchOptions): string[] {
  const charsPerSecond = o.pieceChars * o.piecesPerSecond;
  return [
    `Answers: ${o.minChars === o.maxChars ? `about ${o.maxChars}` : `${o.minChars}-${o.maxChars}`} characters of Markdown, written at ${charsPerSecond} characters/s in ${o.pieceChars}-character pieces; questions arrive at ${o.arrivalsPerSecond}/s from ${o.users} people in one workspace, over 1 channel or spread round robin over several (the "channels" column).`,
    `Service run-start limit raised to ${o.runStartsPerMinute}/min in the simulator AND the bot (ASSISTANT_RUN_STARTS_PER_MINUTE); the real service allows 20/min per token. Other requests keep the real 600/min.`,
    "Fake Slack enforces every method's tier (src/devtools/fake-slack/limits.ts): chat.update 50/min per workspace, chat.postMessage ~1/s per channel after a burst of 3, and so on. The bot runs with its defaults.",
    "First text: from the simulator's stamp of an answer's first piece leaving to the fake Slack's stamp of the first change (post, edit, stream append) that made the thread show any of the answer's letters or digits; a status line, a placeholder or a bare '##' is no text. 'from question' counts from the person's message reaching the fake Slack instead. 'outside' is the first figure measured by a separate observer (bench/outside-view.ts) that shares no code with the bench's.",
    `Lag: at each moment, the age of the oldest written character the thread does not show yet; max exact from the stamps, p95 over samples every ${o.sampleMs} ms, from each answer's first piece until it is readable whole. All shown: from the first question until every answer is readable whole.`,
    "Floor: the least each figure can be under the fake's limits for this workload, for any bot that lets the service write each answer from its question on (bench/floors.ts: messages made as early as the limits allow, text shown the moment it is written). First text has its floor from the question: a bot may hold the service back until it has a message to show the text in, and then its first text from the service's looks quick while the person waits. ×floor is ours divided by the floor, left out where the floor is too small for a ratio to mean anything.",
    `The bot runs in its own process (${o.runtime === "compiled" ? "the tsc build under plain node, as npm start runs it" : "node --import tsx src/main.ts"}; LOG_LEVEL=info), fresh for each repetition with a fresh fake Slack and simulator; RSS and CPU come from its /metrics (CPU counted from ready to the last answer).`,
    `replicas: ${o.replicas}${o.postgres ? ` (each its own process, on one fresh PostgreSQL database per repetition; questions dealt to them round robin; every figure from the fake Slack and the simulator, which see all replicas; RSS is the largest replica's, CPU all of theirs)` : " (SQLite)"}.`,
    "Rows: median over repetitions, except what a target is about (first text p95, lag max, ack p99, 429s, exact), peak RSS and unsettled answers: the worst repetition.",
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
