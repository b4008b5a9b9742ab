import { describe, expect, it } from "vitest";
import { ArgsError, DEFAULT_OPTIONS, parseArgs, repsFor, scenarios } from "../../bench/args.js";

describe("bench arguments", () => {
  it("defaults to the outside comparison: N = 1, 10, 50 in one channel and over 10, 3 times", () => {
    const options = parseArgs([]);
    expect(options).toEqual(DEFAULT_OPTIONS);
    expect(scenarios(options)).toEqual([
      { n: 1, channels: 1, reps: 3 },
      { n: 10, channels: 1, reps: 3 },
      { n: 10, channels: 10, reps: 3 },
      { n: 50, channels: 1, reps: 3 },
      { n: 50, channels: 10, reps: 3 },
    ]);
    // About 1,500 characters at 200 a second in 4-character pieces.
    expect(options).toMatchObject({ maxChars: 1500, pieceChars: 4, piecesPerSecond: 50 });
  });

  it("runs 1 repetition from N = 200 up, and no more channels than conversations", () => {
    const options = parseArgs(["--n", "5,200", "--channels", "10"]);
    expect(scenarios(options)).toEqual([
      { n: 5, channels: 5, reps: 3 },
      { n: 200, channels: 10, reps: 1 },
    ]);
  });

  it("runs Slack's template beside the bot only when asked", () => {
    expect(parseArgs([]).withTemplate).toBe(false);
    expect(parseArgs(["--with-template", "--n", "10"])).toMatchObject({
      withTemplate: true,
      n: [10],
    });
  });

  it("runs one bot on SQLite or PostgreSQL beside the run when asked, and nothing else", () => {
    expect(parseArgs([]).beside).toEqual([]);
    expect(parseArgs(["--postgres", "--beside", "sqlite", "--beside=postgres"])).toMatchObject({
      postgres: true,
      beside: ["sqlite", "postgres"],
    });
    expect(() => parseArgs(["--beside", "mysql"])).toThrow(/--beside is sqlite or postgres/);
  });

  it("reads the quick run of the README", () => {
    const options = parseArgs(["--n", "1,10", "--reps", "1"]);
    expect(options.n).toEqual([1, 10]);
    expect([repsFor(options, 0), repsFor(options, 1)]).toEqual([1, 1]);
  });

  it("takes one repetition count per N, and --flag=value", () => {
    const options = parseArgs(["--n=5,500", "--reps=2,1", "--pieces-per-second=100"]);
    expect([repsFor(options, 0), repsFor(options, 1)]).toEqual([2, 1]);
    expect(options.piecesPerSecond).toBe(100);
  });

  it("applies the default repetitions to a custom N list", () => {
    const options = parseArgs(["--n", "20,300"]);
    expect([repsFor(options, 0), repsFor(options, 1)]).toEqual([3, 1]);
  });

  it("refuses unknown flags, bad numbers and mismatched lists", () => {
    expect(() => parseArgs(["--nope"])).toThrow(ArgsError);
    expect(() => parseArgs(["--n", "1,x"])).toThrow(/--n/);
    expect(() => parseArgs(["--n", "1.5"])).toThrow(/whole/);
    expect(() => parseArgs(["--reps"])).toThrow(/needs a value/);
    expect(() => parseArgs(["--n", "1,2,3", "--reps", "1,2"])).toThrow(/one per entry/);
    expect(() => parseArgs(["--min-chars", "500", "--max-chars", "100"])).toThrow(/exceed/);
    expect(() => parseArgs(["--channels", "0"])).toThrow(/positive/);
    expect(() => parseArgs(["--channels", "1,2.5"])).toThrow(/whole/);
    expect(() => parseArgs(["--piece-chars", "2.5"])).toThrow(/whole/);
  });
});
