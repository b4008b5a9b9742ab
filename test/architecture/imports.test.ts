/**
 * The rules of docs/architecture.md that the import graph can check. Each failure names the
 * cycle or the import that breaks the rule.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findCycles, type ImportEdge, ROOT, readImports } from "./import-graph.js";

const edges = readImports(["src", "tools", "sandbox", "bench"]);
const srcEdges = edges.filter((edge) => edge.from.startsWith("src/"));
const cycles = findCycles(srcEdges);

const under = (folder: string) => (path: string | undefined) =>
  path?.startsWith(`${folder}/`) ?? false;
const shown = (edge: ImportEdge) => `${edge.from} imports "${edge.specifier}" (${edge.to})`;
const shownCycle = (cycle: string[]) => cycle.join(" → ");

/** src's folders, and the files directly in src (bot.ts, config.ts, …). */
const areas = [
  "src/*.ts",
  ...readdirSync(join(ROOT, "src"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `src/${entry.name}`)
    .sort(),
];
const inArea = (area: string) => (path: string) =>
  area === "src/*.ts" ? !path.slice("src/".length).includes("/") : under(area)(path);

describe("the import graph", () => {
  it("is read from the source: it sees src, tools, sandbox and bench, and type-only imports", () => {
    expect(srcEdges.length).toBeGreaterThan(100);
    for (const folder of ["tools/", "sandbox/", "bench/"]) {
      expect(edges.some((edge) => edge.from.startsWith(folder))).toBe(true);
    }
    // methods.ts has only `import type { FakeSlackMethod } from "./limits.js"` of limits.ts.
    expect(edges).toContainEqual({
      from: "tools/fake-slack/methods.ts",
      specifier: "./limits.js",
      to: "tools/fake-slack/limits.ts",
    });
  });

  it("finds a cycle, type-only or not, and names it", () => {
    const edge = (from: string, to: string): ImportEdge => ({ from, specifier: to, to });
    expect(findCycles([edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("c", "d")])).toEqual([
      ["a", "b", "c", "a"],
    ]);
    expect(findCycles([edge("a", "a")])).toEqual([["a", "a"]]);
    expect(findCycles([edge("a", "b"), edge("b", "c"), edge("a", "c")])).toEqual([]);
  });
});

describe("no import cycle in src, type-only imports included", () => {
  it.each(areas)("%s is on no cycle", (area) => {
    const through = cycles.filter((cycle) => cycle.some(inArea(area)));
    expect(through.map(shownCycle), "import cycles").toEqual([]);
  });
});

describe("no product code imports test code", () => {
  it.each(["src", "tools", "sandbox", "bench"])("%s imports nothing from test/", (folder) => {
    const offending = edges.filter((e) => under(folder)(e.from) && under("test")(e.to));
    expect(offending.map(shown), "imports of test/").toEqual([]);
  });

  it.each(["tools", "sandbox", "bench"])("the bot imports nothing from %s/", (folder) => {
    const offending = srcEdges.filter((e) => under(folder)(e.to));
    expect(offending.map(shown), `imports of ${folder}/`).toEqual([]);
  });
});

describe("dependencies point inwards", () => {
  it.each(["src/slack", "src/service"])("src/bridge imports nothing from %s", (outer) => {
    const offending = srcEdges.filter((e) => under("src/bridge")(e.from) && under(outer)(e.to));
    expect(offending.map(shown), `imports of ${outer}`).toEqual([]);
  });
});

describe("the layout shows its parts", () => {
  /** Every folder under src, with the source files directly in it. */
  const folders = (dir: string): { folder: string; files: number }[] => {
    const entries = readdirSync(join(ROOT, dir), { withFileTypes: true });
    const files = entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).length;
    return [
      { folder: dir, files },
      ...entries.filter((e) => e.isDirectory()).flatMap((e) => folders(`${dir}/${e.name}`)),
    ];
  };

  it("keeps createBot to wiring: 90 lines at most", () => {
    const bot = readFileSync(join(ROOT, "src/bot.ts"), "utf8").split("\n");
    const start = bot.findIndex((line) => line.startsWith("export async function createBot("));
    const end = bot.findIndex((line, i) => i > start && line === "}");
    expect(start).toBeGreaterThan(0);
    expect(end - start + 1).toBeLessThanOrEqual(90);
  });

  it("has no folder of more than 15 source files", () => {
    const crowded = folders("src").filter((f) => f.files > 15);
    expect(crowded).toEqual([]);
    expect(folders("src").length).toBeGreaterThan(20);
  });
});
