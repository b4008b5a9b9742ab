import { cpus, totalmem } from "node:os";
import type { BenchOptions } from "./args.js";
import type { ReplicaFigures } from "./replica-metrics.js";
import { fidelity, max, median, percentile } from "./stats.js";
import type { ScenarioResult } from "./summary.js";

/**
 * What Slack's limits allow at best, in the units of the figure beside it. The first text's
 * floor is from the question to the first message that could show text: it is the floor of
 * the first word from the question too (the word's own writing time is not in it).
 */
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
  ackMax: number;
  /** First complete word, from the service's first piece. */
  firstWordP50: number;
  firstWordP95: number;
  /** The same two from the person's question reaching Slack (what the floor bounds). */
  askedFirstWordP50: number;
  askedFirstWordP95: number;
  /** The first two by the outside view, and the largest difference for one answer. */
  outsideFirstWordP50: number;
  outsideFirstWordP95: number;
  outsideDisagreementMs: number;
  /** Full text after the last piece: from the service's last piece to the whole answer shown. */
  afterLastPieceP50: number;
  afterLastPieceP95: number;
  /** Question to complete answer: from the question reaching Slack to the whole answer shown. */
  askedCompleteP50: number;
  askedCompleteP95: number;
  lagP95Seconds: number;
  lagMaxSeconds: number;
  slackCallsPerAnswer: number;
  slack429: number;
  /** Slack's 429s by method, only those that met any (a row: each method's worst repetition). */
  slack429ByMethod: Record<string, number>;
  service429: number;
  /** Share of answers shown exactly, 0–1. */
  fidelity: number;
  peakRssMb: number;
  /** RSS once ready, before the first question, and at the end. */
  idleRssMb: number;
  endRssMb: number;
  endHeapUsedMb: number;
  cpuMsPerAnswer: number;
  /** The machine's one-minute load average as the repetition ended; absent in a row of medians. */
  loadAverage?: number;
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
    ackMax: max(r.ackMs),
    // An answer that never showed its first word (or never showed whole) counts as the
    // slowest there could be.
    firstWordP50: percentile(withMissing(r.firstWordMs, r.n), 50),
    firstWordP95: percentile(withMissing(r.firstWordMs, r.n), 95),
    askedFirstWordP50: percentile(withMissing(r.askedFirstWordMs, r.n), 50),
    askedFirstWordP95: percentile(withMissing(r.askedFirstWordMs, r.n), 95),
    outsideFirstWordP50: percentile(withMissing(r.outsideFirstWordMs, r.n), 50),
    outsideFirstWordP95: percentile(withMissing(r.outsideFirstWordMs, r.n), 95),
    outsideDisagreementMs: r.outsideDisagreementMs,
    afterLastPieceP50: percentile(withMissing(r.afterLastPieceMs, r.n), 50),
    afterLastPieceP95: percentile(withMissing(r.afterLastPieceMs, r.n), 95),
    askedCompleteP50: percentile(withMissing(r.askedCompleteMs, r.n), 50),
    askedCompleteP95: percentile(withMissing(r.askedCompleteMs, r.n), 95),
    lagP95Seconds: percentile(r.lagMs, 95) / 1000,
    lagMaxSeconds: max(r.lagMaxMs) / 1000,
    slackCallsPerAnswer: r.slackWriteCalls / r.n,
    slack429: r.slack429,
    slack429ByMethod: r.slack429ByMethod,
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
 * target is about, which take the worst repetition: the first word p95s, full text after the
 * last piece p95, question to complete p50 and p95, lag max, ack p99 and max, 429s (each
 * method's too), fidelity (min), the outside view's disagreement, peak RSS and unsettled
 * answers (max).
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
    ackMax: worst((f) => f.ackMax),
    firstWordP50: med((f) => f.firstWordP50),
    firstWordP95: worst((f) => f.firstWordP95),
    askedFirstWordP50: med((f) => f.askedFirstWordP50),
    askedFirstWordP95: worst((f) => f.askedFirstWordP95),
    outsideFirstWordP50: med((f) => f.outsideFirstWordP50),
    outsideFirstWordP95: worst((f) => f.outsideFirstWordP95),
    outsideDisagreementMs: worst((f) => f.outsideDisagreementMs),
    afterLastPieceP50: med((f) => f.afterLastPieceP50),
    afterLastPieceP95: worst((f) => f.afterLastPieceP95),
    // A target holds this p50 (N=50: within 30 s): the worst repetition, like the p95s.
    askedCompleteP50: worst((f) => f.askedCompleteP50),
    askedCompleteP95: worst((f) => f.askedCompleteP95),
    lagP95Seconds: med((f) => f.lagP95Seconds),
    lagMaxSeconds: worst((f) => f.lagMaxSeconds),
    slackCallsPerAnswer: med((f) => f.slackCallsPerAnswer),
    slack429: worst((f) => f.slack429),
    slack429ByMethod: worstByMethod(reps),
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

/** Each method's most 429s in one repetition, methods that met none left out. */
function worstByMethod(reps: readonly RepFigures[]): Record<string, number> {
  const methods = new Set(reps.flatMap((f) => Object.keys(f.slack429ByMethod)));
  const out: Record<string, number> = {};
  for (const m of [...methods].sort()) {
    const most = max(reps.map((f) => f.slack429ByMethod[m] ?? 0));
    if (most > 0) out[m] = most;
  }
  return out;
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
    "Fake Slack enforces every method's tier (tools/fake-slack/limits.ts): chat.update 50/min per workspace, chat.postMessage ~1/s per channel after a burst of 3, and so on. The bot runs with its defaults.",
    'Whole words: a person reads words, not fragments. A word is a run of letters and digits; what a Slack state shows of an answer is counted in its letters and digits from the answer\'s start, up to the end of the last whole word ("The qu" of "The quick fox" shows "The"); markup, a status line, a placeholder or a bare \'##\' shows nothing.',
    "First complete word: from the simulator's stamp of an answer's first piece leaving to the fake Slack's stamp of the first change (post, edit, stream append) that made the thread show the answer's first word whole. 'from question' counts from the person's message reaching the fake Slack instead. 'outside' is the first figure measured by a separate observer (bench/outside-view.ts) that shares no code with the bench's.",
    "After last piece: from the simulator's stamp of an answer's last piece to the first change showing the whole answer; it is also how much later than the service's first piece plus its writing time the answer was complete. Question to complete: from the person's message reaching the fake Slack to the whole answer shown. An answer never shown whole (or never its first word) counts as infinitely late in the percentiles.",
    `Lag: at each moment, the age of the oldest written character the thread does not show yet in a whole word (so a word still being written is behind by its writing time so far); max exact from the stamps, p95 over samples every ${o.sampleMs} ms, from each answer's first piece until it is readable whole. All shown: from the first question until every answer is readable whole.`,
    "Ack: from the bench sending each event to the bot's HTTP answer (p50, p99 and the slowest). Slack 429s: the rate-limited answers of the fake Slack, of every method, those that met any named.",
    "Floor: the least each figure can be under the fake's limits for this workload, for any bot that lets the service write each answer from its question on (bench/floors.ts: messages made as early as the limits allow, text shown the moment it is written). The first word has its floor from the question (the first message that could show text): a bot may hold the service back until it has a message to show the text in, and then its first word from the service's looks quick while the person waits. ×floor is ours divided by the floor, left out where the floor is too small for a ratio to mean anything.",
    `The bot runs in its own process (${o.runtime === "compiled" ? "the tsc build under plain node, as npm start runs it" : "node --import tsx src/main.ts"}; LOG_LEVEL=info), fresh for each repetition with a fresh fake Slack and simulator; RSS and CPU come from its /metrics (CPU counted from ready to the last answer).`,
    `replicas: ${o.replicas}${o.postgres ? ` (each its own process, on one fresh PostgreSQL database per repetition; questions dealt to them round robin; every figure from the fake Slack and the simulator, which see all replicas; RSS is the largest replica's, CPU all of theirs)` : " (SQLite)"}.`,
    "Rows: median over repetitions, except what a target is about (first word p95s, after last piece p95, question to complete p50 and p95, lag max, ack p99 and max, 429s, exact), peak RSS and unsettled answers: the worst repetition.",
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
