import { describe, expect, it } from "vitest";
import { aggregate, type RepFigures, type Row } from "../../bench/report.js";
import { formatVerdicts, judge } from "../../bench/targets.js";
import { rep } from "./rep-figures.js";

const row = (overrides: Partial<RepFigures>): Row => aggregate([rep(overrides)]);
const floor = (firstTextP95: number) => ({ ...rep({}).floor, firstTextP95 });

/** A run that meets every target. */
const good = [
  row({ n: 1, channels: 1, firstTextP95: 250, lagMaxSeconds: 1.1 }),
  row({ n: 10, channels: 1, firstTextP95: 1_900 }),
  row({ n: 10, channels: 10, firstTextP95: 900 }),
  row({
    n: 50,
    channels: 1,
    firstTextP95: 30_000,
    askedFirstTextP95: 66_000,
    floor: floor(44_000),
  }),
  row({ n: 50, channels: 10, firstTextP95: 4_900 }),
];

describe("bench targets", () => {
  it("judges every target of the issue on the rows of a run", () => {
    const verdicts = judge(good);
    expect(verdicts.map((v) => [v.target, v.pass])).toEqual([
      ["N=1: first visible text within 300 ms of the service's first text", true],
      ["N=1: the visible text never more than 1.2 s behind the written text", true],
      ["N=10, 1 channel: first visible text p95 within 2 s", true],
      ["N=50, 10 channels: first visible text p95 within 5 s", true],
      ["N=50, 1 channel: first visible text p95 within 1.5× Slack's floor", true],
      ["no Slack 429s at any N", true],
      ["every answer exact at every N", true],
      ["ack p99 under 50 ms at every N", true],
    ]);
    expect(verdicts[4]?.measured).toBe("66000 ms from the question, floor 44000 ms");
  });

  it("fails each target just past its limit, naming the scenario that failed", () => {
    const bad = [
      row({ n: 1, channels: 1, firstTextP95: 301, lagMaxSeconds: 1.21 }),
      row({ n: 10, channels: 1, firstTextP95: 2_001, slack429: 1 }),
      row({ n: 50, channels: 1, askedFirstTextP95: 66_001, floor: floor(44_000), fidelity: 0.98 }),
      row({ n: 50, channels: 10, firstTextP95: 5_001, ackP99: 50 }),
    ];
    const verdicts = judge(bad);
    expect(verdicts.every((v) => !v.pass)).toBe(true);
    expect(verdicts.map((v) => v.measured)).toEqual([
      "301 ms",
      "at most 1.21 s",
      "2001 ms",
      "5001 ms",
      "66001 ms from the question, floor 44000 ms",
      "fails at N=10, 1 channel: 1 429s",
      "fails at N=50, 1 channel: 98% exact",
      "fails at N=50, 10 channels: 50.0 ms",
    ]);
  });

  it("counts an answer that never showed text as a failure, and leaves out what was not run", () => {
    const verdicts = judge([row({ n: 1, channels: 1, firstTextP95: Number.POSITIVE_INFINITY })]);
    expect(verdicts[0]).toMatchObject({ pass: false, measured: "none" });
    expect(verdicts.map((v) => v.target)).not.toContain(
      "N=10, 1 channel: first visible text p95 within 2 s",
    );
  });

  it("prints one line per target with pass or FAIL", () => {
    const text = formatVerdicts(judge([row({ n: 10, channels: 1, firstTextP95: 2_500 })]));
    expect(text.split("\n")[0]).toBe(
      "FAIL  N=10, 1 channel: first visible text p95 within 2 s — 2500 ms",
    );
    expect(text).toContain("pass  no Slack 429s at any N — worst N=10, 1 channel: 0 429s");
  });
});
