/**
 * README.md's configuration table is what an operator reads: it must name every variable the
 * bot reads (src/config-settings.ts) and no other, show each default as the bot applies it, and
 * mark as required exactly the variables always required.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { Setting } from "../../src/config-setting.js";
import { SETTINGS } from "../../src/config-settings.js";

const ROOT = resolve(import.meta.dirname, "../..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

interface Row {
  names: string[];
  required: string;
  default: string;
}

/** The rows of the table under "### Configuration": | variable | required | default | meaning |. */
function configurationRows(): Row[] {
  const section = readme.split("\n### Configuration\n")[1]?.split("\n## ")[0] ?? "";
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      // The first three cells hold no "|" of their own; the meaning may.
      const [, variables = "", required = "", fallback = ""] = line.split("|");
      return {
        names: [...variables.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] ?? ""),
        required: required.trim(),
        default: fallback.trim(),
      };
    });
}

const rows = configurationRows();
const settings: [string, Setting<unknown>][] = Object.entries(SETTINGS);
const rowOf = (name: string) => rows.find((row) => row.names.includes(name));
/** A default cell that is one literal, `code` or "quoted"; undefined when it is prose. */
const literal = (cell: string) => /^`([^`]*)`$|^"([^"]*)"$/.exec(cell)?.slice(1).join("");

describe("README.md's configuration table", () => {
  it("is found, one row per variable or group of variables", () => {
    expect(rows.length).toBeGreaterThan(30);
  });

  it("names every variable the bot reads, and only those", () => {
    const named = rows.flatMap((row) => row.names);
    expect(settings.map(([name]) => name).filter((name) => !named.includes(name))).toEqual([]);
    expect(named.filter((name) => !(name in SETTINGS))).toEqual([]);
  });

  it.each(settings)("shows %s's default as the bot applies it", (name, setting) => {
    const cell = rowOf(name)?.default ?? "";
    if (setting.default !== undefined) expect(cell, `${name} has a default`).not.toBe("");
    const shown = literal(cell);
    // A default that is another variable (OPS_PORT's is PORT) is not a literal value.
    if (shown !== undefined && !(shown in SETTINGS)) expect(shown).toBe(setting.default);
  });

  it.each(settings)("marks %s required exactly when it always is", (name, setting) => {
    expect(rowOf(name)?.required === "yes", name).toBe(setting.required === true);
  });
});
