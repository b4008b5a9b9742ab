/**
 * The bot's own figures when it runs as several replicas: each replica's /metrics (read at
 * ready and at the end), per replica, and summed up as one bot would report them: CPU and
 * turns added up, memory the largest replica's (memory is per process, so the figure stays
 * comparable with one replica's).
 */
import { readSample } from "./bot-process.js";

/** One replica's /metrics, once ready (before the first question) and at the end. */
export interface ReplicaScrape {
  idle: string;
  end: string;
  cpuBefore: number;
  /** The most conversations it held at once, as the bench saw while the run went on. */
  peakLeases?: number;
}

export interface ReplicaFigures {
  /** 1, 2, … in start order. */
  replica: number;
  idleRssMb: number;
  endRssMb: number;
  peakRssMb: number;
  cpuMs: number;
  /** Turns it ended (any outcome). */
  turns: number;
  peakLeases: number;
  takeovers: number;
  sharedBudgetWaits: number;
}

export const OUTCOMES = ["completed", "failed", "stopped", "error"] as const;
const MB = 1024 * 1024;

const sample = (metrics: string, series: string) => readSample(metrics, series) ?? Number.NaN;
const counter = (metrics: string, series: string) => readSample(metrics, series) ?? 0;

/** Turns the bot counted as ended, by outcome. */
export function outcomesOf(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const outcome of OUTCOMES) {
    out[outcome] = counter(metrics, `bridge_turns_total{outcome="${outcome}"}`);
  }
  return out;
}

export function replicaFigures(scrapes: readonly ReplicaScrape[]): ReplicaFigures[] {
  return scrapes.map((s, i) => ({
    replica: i + 1,
    idleRssMb: sample(s.idle, "bridge_process_resident_memory_bytes") / MB,
    endRssMb: sample(s.end, "bridge_process_resident_memory_bytes") / MB,
    peakRssMb: sample(s.end, "bridge_process_peak_resident_memory_bytes") / MB,
    cpuMs: (counter(s.end, "bridge_process_cpu_seconds_total") - s.cpuBefore) * 1000,
    turns: Object.values(outcomesOf(s.end)).reduce((a, b) => a + b, 0),
    peakLeases: s.peakLeases ?? 0,
    takeovers: counter(s.end, "bridge_conversation_takeovers_total"),
    sharedBudgetWaits: counter(s.end, "bridge_shared_budget_waits_total"),
  }));
}

/** The replicas as one bot: what summary.ts reports for a single process. */
export interface FleetFigures {
  idleRssBytes: number;
  endRssBytes: number;
  peakRssBytes: number;
  endHeapUsedBytes: number;
  cpuMs: number;
  outcomes: Record<string, number>;
  takeovers: number;
  sharedBudgetWaits: number;
}

export function fleetFigures(scrapes: readonly ReplicaScrape[]): FleetFigures {
  const largest = (pick: (s: ReplicaScrape) => number) => Math.max(...scrapes.map(pick));
  const total = (pick: (s: ReplicaScrape) => number) =>
    scrapes.reduce((sum, s) => sum + pick(s), 0);
  const outcomes: Record<string, number> = {};
  for (const outcome of OUTCOMES) outcomes[outcome] = total((s) => outcomesOf(s.end)[outcome] ?? 0);
  return {
    idleRssBytes: largest((s) => sample(s.idle, "bridge_process_resident_memory_bytes")),
    endRssBytes: largest((s) => sample(s.end, "bridge_process_resident_memory_bytes")),
    peakRssBytes: largest((s) => sample(s.end, "bridge_process_peak_resident_memory_bytes")),
    endHeapUsedBytes: largest((s) => sample(s.end, "bridge_nodejs_heap_size_used_bytes")),
    cpuMs: total((s) => (counter(s.end, "bridge_process_cpu_seconds_total") - s.cpuBefore) * 1000),
    outcomes,
    takeovers: total((s) => counter(s.end, "bridge_conversation_takeovers_total")),
    sharedBudgetWaits: total((s) => counter(s.end, "bridge_shared_budget_waits_total")),
  };
}
