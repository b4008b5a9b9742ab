import { describe, expect, it } from "vitest";
import { readSample } from "../../bench/bot-process.js";
import { aggregate, repFigures } from "../../bench/report.js";
import type { ScenarioResult } from "../../bench/summary.js";
import { formatAgainstTemplate, formatTables, ratio } from "../../bench/tables.js";
import { rep } from "./rep-figures.js";

/** One made-up repetition's observations: four answers, one never shown. */
function observed(overrides: Partial<ScenarioResult>): ScenarioResult {
  return {
    n: 4,
    channels: 1,
    rep: 1,
    wallMs: 10_000,
    ackMs: [4, 2, 8, 30],
    firstWordMs: [100, 300, 200],
    askedFirstWordMs: [150, 350, 250],
    outsideFirstWordMs: [100, 300, 200],
    outsideDisagreementMs: 0,
    afterLastPieceMs: [40, 60, 500, 80],
    askedCompleteMs: [8_000, 9_000, 7_600],
    lagMaxMs: [100, 200],
    lagMs: [0, 100],
    slackWriteCalls: 40,
    slackCallsByMethod: { "chat.update": 38, "chat.postMessage": 4 },
    slack429: 3,
    slack429ByMethod: { "chat.update": 2, "chat.postMessage": 1 },
    service429: 0,
    serviceRequests: 20,
    exact: [true, true, true, false],
    answerChars: [1_500, 1_500, 1_500, 1_500],
    outcomes: { completed: 4 },
    unsettled: 0,
    floors: { firstTextMs: [0], firstTextP50Ms: 0, firstTextP95Ms: 0, lagMaxMs: 1, allShownMs: 8 },
    idleRssBytes: 0,
    endRssBytes: 0,
    peakRssBytes: 0,
    endHeapUsedBytes: 0,
    cpuMs: 0,
    botProblems: [],
    replicas: 1,
    slackCalls: 42,
    perReplica: [],
    takeovers: 0,
    sharedBudgetWaits: 0,
    ...overrides,
  };
}

describe("bench report", () => {
  it("sums up a repetition: p50/p95 of each answer's figure, a missing answer the slowest", () => {
    const f = repFigures(observed({}));
    expect(f.ackP50).toBe(6);
    expect(f.ackP99).toBeCloseTo(8 + 22 * 0.97, 10);
    expect(f.ackMax).toBe(30);
    // Three answers showed their first word, of four: the fourth counts as never.
    expect(f.firstWordP50).toBe(250);
    expect(f.firstWordP95).toBe(Number.POSITIVE_INFINITY);
    expect(f.askedFirstWordP50).toBe(300);
    expect(f.afterLastPieceP50).toBe(70);
    expect(f.afterLastPieceP95).toBeCloseTo(80 + 420 * 0.85, 10);
    expect(f.askedCompleteP50).toBe(8_500);
    expect(f.askedCompleteP95).toBe(Number.POSITIVE_INFINITY);
    expect(f.slack429).toBe(3);
    expect(f.slack429ByMethod).toEqual({ "chat.update": 2, "chat.postMessage": 1 });
    const whole = repFigures(observed({ askedCompleteMs: [8_000, 9_000, 7_600, 8_200] }));
    expect(whole.askedCompleteP50).toBe(8_100);
    expect(whole.askedCompleteP95).toBeCloseTo(8_200 + 800 * 0.85, 10);
  });

  it("takes the median over repetitions, and the worst for what a target is about", () => {
    const row = aggregate([
      rep({ rep: 1, ackP99: 10, firstWordP50: 100, firstWordP95: 900, slack429: 0, fidelity: 1 }),
      rep({ rep: 2, ackP99: 30, firstWordP50: 300, firstWordP95: 700, slack429: 2, fidelity: 0.9 }),
      rep({ rep: 3, ackP99: 20, firstWordP50: 200, firstWordP95: 800, slack429: 0, fidelity: 1 }),
    ]);
    expect(row).toMatchObject({ n: 10, channels: 1, reps: 3 });
    expect(row.firstWordP50).toBe(200);
    expect(row.firstWordP95).toBe(900);
    expect(row.ackP99).toBe(30);
    expect(row.slack429).toBe(2);
    expect(row.fidelity).toBe(0.9);
    expect(row.floor.firstTextP95).toBe(5_000);
  });

  it("takes the worst repetition for the new targets' figures, the median for the others", () => {
    const row = aggregate([
      rep({
        ackMax: 40,
        askedFirstWordP50: 100,
        askedFirstWordP95: 2_000,
        afterLastPieceP50: 100,
        afterLastPieceP95: 400,
        askedCompleteP50: 20_000,
        askedCompleteP95: 50_000,
        slack429ByMethod: { "chat.update": 2 },
      }),
      rep({
        ackMax: 90,
        askedFirstWordP50: 300,
        askedFirstWordP95: 1_000,
        afterLastPieceP50: 300,
        afterLastPieceP95: 900,
        askedCompleteP50: 31_000,
        askedCompleteP95: 45_000,
        slack429ByMethod: {},
      }),
      rep({
        ackMax: 60,
        askedFirstWordP50: 200,
        askedFirstWordP95: 1_500,
        afterLastPieceP50: 200,
        afterLastPieceP95: 500,
        askedCompleteP50: 25_000,
        askedCompleteP95: 61_000,
        slack429ByMethod: { "chat.update": 1, "chat.postMessage": 3 },
      }),
    ]);
    expect(row.ackMax).toBe(90);
    expect(row.askedFirstWordP50).toBe(200);
    expect(row.askedFirstWordP95).toBe(2_000);
    expect(row.afterLastPieceP50).toBe(200);
    expect(row.afterLastPieceP95).toBe(900);
    expect(row.askedCompleteP50).toBe(31_000);
    expect(row.askedCompleteP95).toBe(61_000);
    expect(row.slack429ByMethod).toEqual({ "chat.postMessage": 3, "chat.update": 2 });
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

  it("prints the first word and the whole answer beside their floors, then the costs", () => {
    const text = formatTables([
      aggregate([
        rep({
          n: 1,
          channels: 1,
          firstWordP95: 25,
          askedCompleteP50: 7_600,
          askedCompleteP95: Number.POSITIVE_INFINITY,
          floor: { ...rep({}).floor, firstTextP95: 0 },
        }),
      ]),
      aggregate([
        rep({
          n: 50,
          channels: 1,
          askedFirstWordP95: 60_000,
          wallSeconds: 70,
          afterLastPieceP95: 2_500,
          askedCompleteP50: 31_000,
          askedCompleteP95: 65_000,
          ackMax: 48.25,
          slack429: 3,
          slack429ByMethod: { "chat.postMessage": 1, "chat.update": 2 },
        }),
      ]),
    ]);
    const lines = text.split("\n");
    expect(lines[0]).toBe(
      "What a person sees first, in whole words, against the floor Slack's limits allow for the workload:",
    );
    expect(lines[1]).toMatch(
      /^\s*N\s+channels\s+reps\s+1st word p50\/p95 ms\s+from question\s+floor p50\/p95\s+p95 ×floor\s+outside p50\/p95$/,
    );
    expect(lines[3]).toMatch(/^ 1\s+1\s+1\s+300 \/ 25\s+400 \/ 1000\s+0 \/ 0\s+–\s+300 \/ 900$/);
    expect(lines[4]).toMatch(
      /^50\s+1\s+1\s+300 \/ 900\s+400 \/ 60000\s+0 \/ 5000\s+×12\.0\s+300 \/ 900$/,
    );
    expect(lines[6]).toBe("How the whole answer follows the service's writing, against the floor:");
    expect(lines[7]).toMatch(
      /^\s*N\s+channels\s+reps\s+lag p95\/max s\s+max floor\s+max ×floor\s+after last piece p50\/p95 ms\s+question→complete p50\/p95 s\s+all shown s\s+floor\s+shown ×floor$/,
    );
    expect(lines[9]).toMatch(
      /^ 1\s+1\s+1\s+1\.5 \/ 3\.0\s+6\.0\s+×0\.5\s+100 \/ 200\s+7\.6 \/ ∞\s+20\.0\s+10\.0\s+×2\.0$/,
    );
    expect(lines[10]).toMatch(
      /^50\s+1\s+1\s+1\.5 \/ 3\.0\s+6\.0\s+×0\.5\s+100 \/ 2500\s+31\.0 \/ 65\.0\s+70\.0\s+10\.0\s+×7\.0$/,
    );
    expect(lines[12]).toBe("What it costs:");
    expect(lines[13]).toMatch(
      /^\s*N\s+channels\s+reps\s+ack p50\/p99\/max ms\s+Slack calls\/ans\s+429 Slack\/svc\s+exact\s+unsettled\s+peak RSS MB\s+CPU ms\/ans\s+Slack 429s by method$/,
    );
    expect(lines[15]).toMatch(/^ 1\s+1\s+1\s+2\.0 \/ 10\.0 \/ 12\.0\s+4\.0\s+0 \/ 0\s+100%.*\s–$/);
    expect(lines[16]).toMatch(
      /^50\s+1\s+1\s+2\.0 \/ 10\.0 \/ 48\.3\s+4\.0\s+3 \/ 0\s+100%\s+0\s+150\s+40\.0\s+chat\.update 2, chat\.postMessage 1$/,
    );
    expect(lines).toHaveLength(17);
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

  it("prints the bot beside Slack's template, figure by figure, ours first", () => {
    const ours = aggregate([rep({ n: 10, channels: 10, firstWordP95: 76, slack429: 0 })]);
    const theirs = aggregate([
      rep({ n: 10, channels: 10, firstWordP95: 1_305, slack429: 7, ackP50: 4, ackMax: 8 }),
    ]);
    const [head, rule, row, more] = formatAgainstTemplate([ours], [theirs]).split("\n");
    expect(head).toMatch(
      /^\s*N\s+channels\s+1st word p95 ms\s+after last piece p95 ms\s+lag max s/,
    );
    expect(rule).toMatch(/^-+(\s+-+)+$/);
    expect(row).toContain("76 | 1305");
    expect(row).toContain("0 | 7");
    expect(row).toContain("2 / 12 | 4 / 8");
    expect(more).toBeUndefined();
  });
});
