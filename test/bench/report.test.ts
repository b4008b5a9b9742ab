import { describe, expect, it } from "vitest";
import { readSample } from "../../bench/bot-process.js";
import { aggregate, formatTable, type RepFigures } from "../../bench/report.js";

function rep(overrides: Partial<RepFigures>): RepFigures {
  return {
    n: 10,
    rep: 1,
    wallSeconds: 20,
    ackP50: 2,
    ackP99: 10,
    firstVisibleP50: 300,
    firstVisibleP95: 900,
    stalenessP95Seconds: 1.5,
    stalenessMaxSeconds: 3,
    staleCharsP95: 200,
    slackCallsPerAnswer: 4,
    slack429: 0,
    service429: 0,
    fidelity: 1,
    peakRssMb: 150,
    idleRssMb: 100,
    endRssMb: 140,
    endHeapUsedMb: 30,
    cpuMsPerAnswer: 40,
    unsettled: 0,
    meanAnswerChars: 1500,
    ...overrides,
  };
}

describe("bench report", () => {
  it("takes the median over repetitions, and the worst for 429s, fidelity and peak RSS", () => {
    const row = aggregate([
      rep({ rep: 1, ackP99: 10, peakRssMb: 150, slack429: 0, fidelity: 1 }),
      rep({ rep: 2, ackP99: 30, peakRssMb: 170, slack429: 2, fidelity: 0.9 }),
      rep({ rep: 3, ackP99: 20, peakRssMb: 160, slack429: 0, fidelity: 1 }),
    ]);
    expect(row.reps).toBe(3);
    expect(row.ackP99).toBe(20);
    expect(row.peakRssMb).toBe(170);
    expect(row.slack429).toBe(2);
    expect(row.fidelity).toBe(0.9);
  });

  it("prints one aligned row per N", () => {
    const table = formatTable([
      aggregate([rep({ n: 1 })]),
      aggregate([rep({ n: 200, firstVisibleP50: Number.NaN })]),
    ]);
    const lines = table.split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^\s*N\s+reps\s+ack p50\/p99 ms/);
    expect(lines[3]).toMatch(/^200\s+1\s+2\.0 \/ 10\.0\s+– \/ 900/);
    expect(lines[2]).toContain("100%");
  });

  it("reads a series from Prometheus text", () => {
    const text = [
      "# HELP bridge_turns_total Answered Slack messages by outcome.",
      'bridge_turns_total{outcome="completed"} 3',
      'bridge_turns_total{outcome="error"} 0',
      "bridge_process_cpu_seconds_total 1.25",
    ].join("\n");
    expect(readSample(text, 'bridge_turns_total{outcome="completed"}')).toBe(3);
    expect(readSample(text, "bridge_process_cpu_seconds_total")).toBe(1.25);
    expect(readSample(text, "bridge_missing")).toBeUndefined();
  });
});
