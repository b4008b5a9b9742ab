import type { Row } from "./report.js";

/**
 * The targets the bench is held to (issue #20, "Answers in order and at Slack's full pace"),
 * judged on the rows of one run: what a person sees, in whole words (visibility.ts). A
 * target whose scenario was not run is left out, not passed. Scenarios: N=1 in one channel;
 * N=10 and N=50 each in one channel and over ten.
 */

export interface Verdict {
  target: string;
  /** What was measured, in words and units, with the scenario when it is one of several. */
  measured: string;
  pass: boolean;
}

const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)} ms` : "none");
/** Seconds to the ms, so that a figure just past its limit never reads as the limit. */
const s = (value: number) => (Number.isFinite(value) ? `${value.toFixed(3)} s` : "none");
const scenario = (r: Row) => `N=${r.n}, ${r.channels} channel${r.channels === 1 ? "" : "s"}`;

function find(rows: readonly Row[], n: number, channels: number): Row | undefined {
  return rows.find((r) => r.n === n && r.channels === Math.min(channels, n));
}

/** The scenarios' rows that were run, one channel first. */
function found(rows: readonly Row[], n: number): Row[] {
  return [1, 10].flatMap((channels) => find(rows, n, channels) ?? []);
}

/** "chat.update 2, chat.postMessage 1": the methods that met 429s, most first. */
export function byMethod(counts: Readonly<Record<string, number>>): string {
  return Object.entries(counts)
    .filter(([, count]) => count > 0)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([method, count]) => `${method} ${count}`)
    .join(", ");
}

/** One verdict per scenario target, scenario by scenario, then those every scenario must meet. */
export function judge(rows: readonly Row[]): Verdict[] {
  const verdicts: Verdict[] = [];
  const one = find(rows, 1, 1);
  if (one) {
    verdicts.push({
      target: "N=1: first complete word within 0.3 s of the service's first piece",
      measured: ms(one.firstWordP95),
      pass: one.firstWordP95 <= 300,
    });
    verdicts.push({
      target: "N=1: full text within 0.3 s of the service's last piece",
      measured: ms(one.afterLastPieceP95),
      pass: one.afterLastPieceP95 <= 300,
    });
  }
  for (const row of found(rows, 10)) {
    verdicts.push({
      target: `${scenario(row)}: the shown text never more than 1.5 s behind the written text`,
      measured: `at most ${s(row.lagMaxSeconds)}`,
      pass: row.lagMaxSeconds <= 1.5,
    });
    // Per answer, question to complete less (question to first piece + writing time) is
    // complete less last piece: one figure for both of the issue's sentences.
    verdicts.push({
      target: `${scenario(row)}: full text within 0.5 s of the service's last piece at p95, so question to complete answer within 0.5 s of the service's first piece plus writing time`,
      measured: `p95 ${ms(row.afterLastPieceP95)} after the last piece (question to complete p50 ${s(row.askedCompleteP50 / 1000)}, p95 ${s(row.askedCompleteP95 / 1000)})`,
      pass: row.afterLastPieceP95 <= 500,
    });
    verdicts.push(ack(row, 50));
  }
  for (const row of found(rows, 50)) {
    verdicts.push({
      target: `${scenario(row)}: question to complete answer p50 within 30 s`,
      measured: s(row.askedCompleteP50 / 1000),
      pass: row.askedCompleteP50 <= 30_000,
    });
    verdicts.push({
      target: `${scenario(row)}: question to complete answer p95 within 60 s`,
      measured: s(row.askedCompleteP95 / 1000),
      pass: row.askedCompleteP95 <= 60_000,
    });
    verdicts.push({
      target: `${scenario(row)}: first complete word p95 within 10 s of the service's first piece`,
      measured: `${ms(row.firstWordP95)} (${ms(row.askedFirstWordP95)} from the question)`,
      pass: row.firstWordP95 <= 10_000,
    });
    verdicts.push(ack(row, 100));
  }
  if (rows.length === 0) return verdicts;
  const everywhere = (
    target: string,
    pick: (r: Row) => number,
    ok: (v: number) => boolean,
    say: (r: Row) => string,
  ) => {
    const failing = rows.filter((r) => !ok(pick(r)));
    const worst = rows.reduce((a, b) => (pick(b) > pick(a) ? b : a));
    verdicts.push({
      target,
      measured:
        failing.length === 0
          ? `worst ${scenario(worst)}: ${say(worst)}`
          : `fails at ${failing.map((r) => `${scenario(r)}: ${say(r)}`).join("; ")}`,
      pass: failing.length === 0,
    });
  };
  everywhere(
    "0 Slack 429s of any method at every N",
    (r) => r.slack429,
    (v) => v === 0,
    (r) => {
      const methods = byMethod(r.slack429ByMethod);
      return `${r.slack429} 429s${methods === "" ? "" : ` (${methods})`}`;
    },
  );
  everywhere(
    "every answer exact at every N",
    (r) => 1 - r.fidelity,
    (v) => v === 0,
    (r) => `${fixedPercent(r.fidelity)} exact`,
  );
  return verdicts;
}

function ack(row: Row, limitMs: number): Verdict {
  return {
    target: `${scenario(row)}: acknowledgement p99 under ${limitMs} ms`,
    measured: Number.isFinite(row.ackP99) ? `${row.ackP99.toFixed(2)} ms` : "none",
    pass: row.ackP99 < limitMs,
  };
}

function fixedPercent(share: number): string {
  return Number.isFinite(share) ? `${(share * 100).toFixed(0)}%` : "none";
}

/** One line per verdict: "pass" or "FAIL", the target, what was measured. */
export function formatVerdicts(verdicts: readonly Verdict[]): string {
  return verdicts.map((v) => `${v.pass ? "pass" : "FAIL"}  ${v.target} — ${v.measured}`).join("\n");
}
