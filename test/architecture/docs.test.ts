import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./import-graph.js";

/** docs/architecture.md lays out the bot's code: every file of it is named there. */
const DOC = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");

/** The bot's own source files. */
function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("docs/architecture.md", () => {
  it.each(sourceFiles("src"))("names %s", (path) => {
    expect(DOC).toContain(basename(path));
  });

  it("says where each event of the turn state machine is sent", () => {
    const machine = readFileSync(join(ROOT, "src", "store", "turn.ts"), "utf8");
    const events = [...machine.matchAll(/^ {2}(\w+): \{ from:/gm)].map((m) => m[1]);
    expect(events.length).toBeGreaterThan(5);
    for (const event of events) expect(DOC).toContain(`| \`${event}\``);
  });
});
