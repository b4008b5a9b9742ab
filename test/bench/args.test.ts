import { describe, expect, it } from "vitest";
import { ArgsError, DEFAULT_OPTIONS, parseArgs, repsFor } from "../../bench/args.js";

describe("bench arguments", () => {
  it("defaults to N = 1, 10, 50, 200 with 3 repetitions, 1 at N = 200", () => {
    const options = parseArgs([]);
    expect(options).toEqual(DEFAULT_OPTIONS);
    expect(options.n.map((_, i) => repsFor(options, i))).toEqual([3, 3, 3, 1]);
  });

  it("reads the quick run of the README", () => {
    const options = parseArgs(["--n", "1,10", "--reps", "1"]);
    expect(options.n).toEqual([1, 10]);
    expect([repsFor(options, 0), repsFor(options, 1)]).toEqual([1, 1]);
  });

  it("takes one repetition count per N, and --flag=value", () => {
    const options = parseArgs(["--n=5,500", "--reps=2,1", "--tokens-per-second=100"]);
    expect([repsFor(options, 0), repsFor(options, 1)]).toEqual([2, 1]);
    expect(options.tokensPerSecond).toBe(100);
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
  });
});
