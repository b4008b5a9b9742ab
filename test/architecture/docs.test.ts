import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./import-graph.js";

/**
 * docs/architecture.md lays out the bot's code by its parts (every folder), and walks one
 * mention through the files it passes.
 */
const DOC = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");

/** The bot's own source folders. */
function sourceFolders(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? [`${folder}/${entry.name}`, ...sourceFolders(`${folder}/${entry.name}`)]
      : [],
  );
}

/** The section that walks one mention through the code, up to the next heading. */
const WALK = /### One mention, through the code\n([\s\S]*?)\n##/.exec(DOC)?.[1] ?? "";

describe("docs/architecture.md", () => {
  it.each(sourceFolders("src"))("names the part %s", (path) => {
    expect(DOC).toContain(`${basename(path)}/`);
  });

  it("walks one mention through at most 25 files of src, each of which exists", () => {
    const named = new Set([...WALK.matchAll(/`([\w/.-]+\.ts)`/g)].map((m) => m[1] as string));
    const paths = [...named].filter((name) => name.includes("/"));
    expect(paths.length).toBeGreaterThan(15);
    expect(paths.length).toBeLessThanOrEqual(25);
    expect(paths.filter((path) => !existsSync(join(ROOT, "src", path)))).toEqual([]);
  });

  it("says where each event of the turn state machine is sent", () => {
    const machine = readFileSync(join(ROOT, "src", "store", "turn.ts"), "utf8");
    const events = [...machine.matchAll(/^ {2}(\w+): \{ from:/gm)].map((m) => m[1]);
    expect(events.length).toBeGreaterThan(5);
    for (const event of events) expect(DOC).toContain(`| \`${event}\``);
  });
});
