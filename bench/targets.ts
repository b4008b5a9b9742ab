import type { Row } from "./report.js";

/**
 * The targets the bench is held to (the "Performance" section), judged on the rows
 * of one run. A target whose scenario was not run is left out, not passed. First text is
 * counted from the service's first text, except against Slack's floor: the floor bounds it
 * from the question, which a bot that holds the service back cannot get under.
 */

export interface Verdict {
  target: string;
  /** What was measured, in words and units, with the scenario when it is one of several. */
  measured: string;
  pass: boolean;
}

const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)} ms` : "none");
const s = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)} s` : "none");
const scenario = (r: Row) => `N=${r.n}, ${r.channels} channel${r.channels === 1 ? "" : "s"}`;

function find(rows: readonly Row[], n: number, channels: number): Row | undefined {
  return rows.find((r) => r.n === n && r.channels === Math.min(channels, n));
}

/** One verdict per scenario target, then one per target every scenario must meet. */
export function judge(rows: readonly Row[]): Verdict[] {
  const verdicts: Verdict[] = [];
  const one = find(rows, 1, 1);
  if (one) {
    verdicts.push({
      target: "N=1: first visible text within 300 ms of the service's first text",
      measured: ms(one.firstTextP95),
      pass: one.firstTextP95 <= 300,
    });
    verdicts.push({
      target: "N=1: the visible text never more than 1.2 s behind the written text",
      measured: `at most ${s(one.lagMaxSeconds)}`,
      pass: one.lagMaxSeconds <= 1.2,
    });
  }
  const p95Within = (n: number, channels: number, limitMs: number) => {
    const row = find(rows, n, channels);
    if (!row) return;
    verdicts.push({
      target: `${scenario(row)}: first visible text p95 within ${limitMs / 1000} s`,
      measured: ms(row.firstTextP95),
      pass: row.firstTextP95 <= limitMs,
    });
  };
  p95Within(10, 1, 2_000);
  p95Within(50, 10, 5_000);
  const crowded = find(rows, 50, 1);
  if (crowded) {
    const limit = 1.5 * crowded.floor.firstTextP95;
    verdicts.push({
      target: "N=50, 1 channel: first visible text p95 within 1.5× Slack's floor",
      measured: `${ms(crowded.askedFirstTextP95)} from the question, floor ${ms(crowded.floor.firstTextP95)}`,
      pass: crowded.askedFirstTextP95 <= limit,
    });
  }
  if (rows.length === 0) return verdicts;
  const everywhere = (
    target: string,
    pick: (r: Row) => number,
    ok: (v: number) => boolean,
    say: (v: number) => string,
  ) => {
    const failing = rows.filter((r) => !ok(pick(r)));
    const shown = failing[0] ?? rows.reduce((a, b) => (pick(b) > pick(a) ? b : a));
    verdicts.push({
      target,
      measured: `${failing.length === 0 ? "worst" : "fails at"} ${scenario(shown)}: ${say(pick(shown))}`,
      pass: failing.length === 0,
    });
  };
  everywhere(
    "no Slack 429s at any N",
    (r) => r.slack429,
    (v) => v === 0,
    (v) => `${v} 429s`,
  );
  everywhere(
    "every answer exact at every N",
    (r) => 1 - r.fidelity,
    (v) => v === 0,
    (v) => `${fixedPercent(1 - v)} exact`,
  );
  everywhere(
    "ack p99 under 50 ms at every N",
    (r) => r.ackP99,
    (v) => v < 50,
    (v) => `${v.toFixed(1)} ms`,
  );
  return verdicts;
}

function fixedPercent(share: number): string {
  return Number.isFinite(share) ? `${(share * 100).toFixed(0)}%` : "none";
}

/** One line per verdict: "pass" or "FAIL", the target, what was measured. */
export function formatVerdicts(verdicts: readonly Verdict[]): string {
  return verdicts.map((v) => `${v.pass ? "pass" : "FAIL"}  ${v.target} — ${v.measured}`).join("\n");
}
