/**
 * `.env.example` is what a newcomer copies to `.env`: it must name every setting of the
 * contract, and its values (placeholders filled in) must be settings the bot accepts, with
 * the defaults it shows being the bot's real defaults.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { SETTINGS } from "../../src/config-settings.js";

const ROOT = resolve(import.meta.dirname, "../..");
const example = readFileSync(join(ROOT, ".env.example"), "utf8");

/** The configuration table of the bridge's outside contract (contract.md). */
const CONTRACT_VARIABLES = [
  "SLACK_BOT_TOKEN",
  "SLACK_APP_TOKEN",
  "SLACK_SIGNING_SECRET",
  "PORT",
  "SLACK_API_URL",
  "ASSISTANT_API_URL",
  "ASSISTANT_API_TOKEN",
  "ASSISTANT_ID",
  "DATABASE_PATH",
  "LOG_LEVEL",
  "SLACK_CLIENT_ID",
  "SLACK_CLIENT_SECRET",
  "SLACK_STATE_SECRET",
];

/** Settings as the file sets them (the way `process.loadEnvFile` reads it). */
const active = parseEnv(example) as Record<string, string>;
/** Settings shown commented out (`# NAME=value`): optional ones, with their default. */
const commented = parseEnv(
  example
    .split("\n")
    .filter((line) => /^#\s*[A-Z][A-Z0-9_]*=/.test(line))
    .map((line) => line.replace(/^#\s*/, ""))
    .join("\n"),
) as Record<string, string>;

/** Placeholder values a person replaces; empty required ones get a plausible value. */
function filled(env: Record<string, string>): Record<string, string> {
  return {
    ...env,
    SLACK_SIGNING_SECRET: env.SLACK_SIGNING_SECRET || "8f14e45fceea167a5a36dedd4bea2543",
  };
}

describe(".env.example", () => {
  it("names every variable of the contract's configuration table", () => {
    const named = new Set([...Object.keys(active), ...Object.keys(commented)]);
    for (const name of CONTRACT_VARIABLES) expect(named.has(name), name).toBe(true);
  });

  it("names only variables the bot reads", () => {
    for (const name of [...Object.keys(active), ...Object.keys(commented)]) {
      expect(name in SETTINGS, `${name} is declared in src/config-settings.ts`).toBe(true);
    }
  });

  it("holds values loadConfig accepts once the placeholders are filled in", () => {
    const config = loadConfig(filled(active));
    expect(config.service.baseUrl).toBe(active.ASSISTANT_API_URL?.replace(/\/+$/, ""));
    expect(config.service.assistantId).toBe(active.ASSISTANT_ID);
    expect(config.databasePath).toBe(active.DATABASE_PATH);
  });

  it("shows the bot's real defaults for the settings it leaves commented out", () => {
    const withDefaults = loadConfig(filled(active));
    const withShown = loadConfig(filled({ ...active, ...commented }));
    expect(withShown).toEqual(withDefaults);
  });
});
