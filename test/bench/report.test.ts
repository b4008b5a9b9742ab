import { describe, expect, it } from "vitest";
import { readSample } from "../../bench/bot-process.js";
import { aggregate } from "../../bench/report.js";
import { formatTables, ratio } from "../../bench/tables.js";
import { rep } from "./rep-figures.js";

describe("bench report", () => {
  it("takes the median over repetitions, and the worst for what a target is about", () => {
    const row = aggregate([
      rep({ rep: 1, ackP99: 10, firstTextP50: 100, firstTextP95: 900, slack429: 0, fidelity: 1 }),
      rep({ rep: 2, ackP99: 30, firstTextP50: 300, firstTextP95: 700, slack429: 2, fidelity: 0.9 }),
      rep({ rep: 3, ackP99: 20, firstTextP50: 200, firstTextP95: 800, slack429: 0, fidelity: 1 }),
    ]);
    expect(row).toMatchObject({ n: 10, channels: 1, reps: 3 });
    expect(row.firstTextP50).toBe(200);
    expect(row.firstTextP95).toBe(900);
    expect(row.ackP99).toBe(30);
    expect(row.slack429).toBe(2);
    expect(row.fidelity).toBe(0.9);
    expect(row.floor.firstTextP95).toBe(5_000);
  });

  it("keeps the Slack calls of each method, as their median over the repetitions", () => {
    const row = aggregate([
      rep({ slackCallsByMethod: { "chat.update": 90, "auth.test": 1 } }),
      rep({ slackCallsByMethod: { "chat.update": 70, "chat.postMessage": 10 } }),
      rep({ slackCallsByMethod: { "chat.update": 80, "chat.postMessage": 10, "auth.test": 3 } }),
    ]);
    expect(row.slackCallsByMethod).toEqual({
      "auth.test": 1,
      "chat.postMessage": 10,
      "chat.update": 80,
    });
  });

  it("prints each figure beside its floor and the ratio, and the costs in a second table", () => {
    const text = formatTables([
      aggregate([
        rep({ n: 1, channels: 1, firstTextP95: 25, floor: { ...rep({}).floor, firstTextP95: 0 } }),
      ]),
      aggregate([rep({ n: 50, channels: 1, askedFirstTextP95: 60_000, wallSeconds: 70 })]),
    ]);
    const lines = text.split("\n");
    expect(lines[1]).toMatch(
      /^\s*N\s+channels\s+reps\s+1st text p50\/p95 ms\s+from question\s+floor p50\/p95\s+p95 ×floor/,
    );
    expect(lines[3]).toMatch(/^ 1\s+1\s+1\s+300 \/ 25\s+400 \/ 1000\s+0 \/ 0\s+–/);
    expect(lines[4]).toMatch(/^50\s+1\s+1\s+300 \/ 900\s+400 \/ 60000\s+0 \/ 5000\s+×12\.0/);
    expect(lines[4]).toMatch(/70\.0\s+10\.0\s+×7\.0$/);
    expect(text).toContain("What it costs:");
    expect(lines.at(-1)).toMatch(/^50\s+1\s+1\s+2\.0 \/ 10\.0\s+4\.0\s+0 \/ 0\s+100%/);
  });

  it("gives a ratio only where the floor is big enough for one to mean something", () => {
    expect(ratio(1_500, 1_000, 100)).toBe("×1.5");
    expect(ratio(25, 0, 100)).toBe("–");
    expect(ratio(25, 50, 100)).toBe("–");
    expect(ratio(Number.POSITIVE_INFINITY, 1_000, 100)).toBe("–");
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
