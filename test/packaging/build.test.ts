/**
 * The production build (`npm run build`: dist/, and so the Docker image) holds the bot only:
 * the files tsc compiles for it are the bot's own, under src/, each loaded by an entry point
 * the package or the image runs. The fake Slack and the simulator (tools/) never get in, nor
 * anything else the bot does not load.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, readImports } from "../architecture/import-graph.js";

/** The project's files in the build's program, as tsc lists them (libraries left out). */
function buildFiles(): string[] {
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  const listed = execFileSync(
    process.execPath,
    [tsc, "-p", "tsconfig.build.json", "--listFilesOnly"],
    {
      cwd: ROOT,
      encoding: "utf8",
    },
  );
  return listed
    .split("\n")
    .filter(
      (line) =>
        line !== "" &&
        !line.includes(`${sep}node_modules${sep}`) &&
        !line.includes("/node_modules/"),
    )
    .map((line) => relative(ROOT, line).split(sep).join("/"))
    .sort();
}

/** The compiled files package.json and the Dockerfile run (`dist/x.js`), as their sources. */
function entryPoints(): string[] {
  const text = [
    readFileSync(join(ROOT, "package.json"), "utf8"),
    readFileSync(join(ROOT, "Dockerfile"), "utf8"),
  ].join("\n");
  const compiled = new Set([...text.matchAll(/\bdist\/([\w/.-]+)\.js\b/g)].map((m) => m[1]));
  return [...compiled].map((path) => `src/${path}.ts`).sort();
}

/** Every src file an entry point loads, directly or not (type-only imports included). */
function loadedBy(entries: string[]): Set<string> {
  const next = new Map<string, string[]>();
  for (const { from, to } of readImports(["src"])) {
    if (to !== undefined) next.set(from, [...(next.get(from) ?? []), to]);
  }
  const seen = new Set<string>();
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    pending.push(...(next.get(file) ?? []));
  }
  return seen;
}

/**
 * In src/ but loaded by no entry point, on purpose: the in-memory stores (SQLite in memory)
 * that the core's tests and the sandbox run on; and the parts of
 * reading shared files, built and tested but not yet wired to turns (issue #22).
 */
const NOT_LOADED = ["src/store/in-memory.ts", "src/files/"];

describe("the production build", () => {
  const files = buildFiles();
  const entries = entryPoints();

  it("is read from tsc and the entry points from package.json and the Dockerfile", () => {
    expect(entries).toEqual(["src/main.ts", "src/people/rotate-key-cli.ts"]);
    expect(files).toEqual(expect.arrayContaining(entries));
    expect(files.length).toBeGreaterThan(100);
  });

  it("compiles nothing outside src/: not the fake Slack, the simulator, tests, sandbox or bench", () => {
    expect(files.filter((file) => !file.startsWith("src/"))).toEqual([]);
  });

  it("compiles only what the bot's entry points load", () => {
    const loaded = loadedBy(entries);
    const extra = files.filter(
      (file) => !loaded.has(file) && !NOT_LOADED.some((folder) => file.startsWith(folder)),
    );
    expect(extra, "in the build, loaded by no entry point").toEqual([]);
  });
});
