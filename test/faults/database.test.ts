import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { hasStopButton } from "../support/bridge-harness.js";
import {
  type ChildBot,
  childEnv,
  mentionChild,
  spawnChildBot,
  startChildBot,
} from "../support/child-bot.js";
import { tempFolder } from "../support/temp-folder.js";

const CHANNEL = "C0DB";
const USER = "U0ALICE";

let sim: RunningSimulator;
let slack: FakeSlack;
const children: ChildBot[] = [];

beforeEach(async () => {
  sim = await startSimulator({ queueDelayMs: 10, answer: { tokensPerSecond: 400 } });
  slack = await startFakeSlack();
});

afterEach(async () => {
  for (const child of children.splice(0)) await child.kill("SIGKILL");
  await slack.close();
  await sim.close();
});

const env = (databasePath: string) =>
  childEnv({ slackApiUrl: slack.apiUrl, serviceUrl: sim.url, databasePath });

describe("the database in trouble", () => {
  it("refuses to start on a file another process holds, with one clear error, and harms nothing", async () => {
    const databasePath = join(tempFolder("faults-db-"), "bridge.db");
    const running = await startChildBot(env(databasePath));
    children.push(running);

    const second = spawnChildBot(env(databasePath));
    children.push(second);
    const exit = await second.exited;
    expect(exit.code).toBe(1);
    expect(second.stderr()).toMatch(
      /^The bot could not start: Cannot open the database at .*bridge\.db: database is locked \(another process holds it/,
    );
    expect(second.stderr()).not.toContain("    at ");

    // The bot that holds the file works on, and its records are whole.
    sim.control.enqueueAnswer({ text: "Still here." });
    const { ts } = await mentionChild(running, slack, {
      text: "<@UBOT> are you fine?",
      channel: CHANNEL,
      user: USER,
    });
    await slack.waitFor(
      (s) => s.replies(CHANNEL, ts).some((m) => !hasStopButton(m) && m.text.includes("Still")),
      10_000,
    );
    await running.kill("SIGTERM");
    const db = new Database(databasePath, { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(db.prepare("SELECT state, outcome FROM turns").all()).toEqual([
        { state: "finished", outcome: "completed" },
      ]);
    } finally {
      db.close();
    }
  }, 120_000);

  it("refuses to start on a database written by a newer release, naming both versions", async () => {
    const databasePath = join(tempFolder("faults-db-"), "bridge.db");
    const current = await startChildBot(env(databasePath));
    children.push(current);
    await current.kill("SIGTERM");
    const db = new Database(databasePath);
    const known = db.pragma("user_version", { simple: true }) as number;
    db.pragma(`user_version = ${known + 1}`);
    db.close();

    const older = spawnChildBot(env(databasePath));
    children.push(older);
    expect((await older.exited).code).toBe(1);
    expect(older.stderr()).toBe(
      `The bot could not start: Cannot open the database at ${databasePath}: its schema is version ${known + 1}, but this version of the bot knows versions up to ${known}: the file was written by a newer release of the bot. Run that release (or a later one) on it, or set DATABASE_PATH to another file\n`,
    );
  });

  it("refuses to start where the file cannot be written, with one clear error", async () => {
    // sysfs takes no new files, whoever asks: a read-only place to put the database.
    const bot = spawnChildBot(env("/sys/bridge.db"));
    children.push(bot);
    const exit = await bot.exited;
    expect(exit.code).toBe(1);
    expect(bot.stderr()).toMatch(
      /^The bot could not start: Cannot open the database at \/sys\/bridge\.db: .*\(check that the file and its folder exist and are writable\)\n$/,
    );
  });
});
