import { describe, expect, it } from "vitest";
import { parseArgs } from "../../bench/args.js";
import { sidesOf, turns } from "../../bench/sides.js";

describe("setups run beside the bot", () => {
  it("are the databases --beside names, then the template, each one bot", () => {
    const sides = sidesOf(parseArgs(["--beside", "postgres", "--with-template"]));
    expect(sides.map(({ name, setup }) => ({ name, setup }))).toEqual([
      { name: "one bot on PostgreSQL", setup: { postgres: true, replicas: 1, template: false } },
      { name: "Slack's agent template", setup: { postgres: false, replicas: 1, template: true } },
    ]);
    expect(sidesOf(parseArgs(["--replicas", "3"]))).toEqual([]);
  });

  it("go first every other repetition, so that the run and they take turns", () => {
    expect(turns(1, 2)).toEqual([undefined, 0, 1]);
    expect(turns(2, 2)).toEqual([0, 1, undefined]);
    expect(turns(3, 1)).toEqual([undefined, 0]);
    expect(turns(4, 0)).toEqual([undefined]);
  });
});
