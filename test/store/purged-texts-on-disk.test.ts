import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Retention } from "../../src/store/retention.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import type { Stores } from "../../src/store/stores.js";
import { ManualClock } from "../support/manual-clock.js";
import { tempFolder } from "../support/temp-folder.js";
import { distinctiveText, sqliteFilesHolding } from "../support/text-on-disk.js";

const DAY = 86_400_000;
const quiet = { info() {}, error() {} };

/**
 * A turn asking `question`, taken through every step an answer writes (each one rewrites the
 * row, and the text with it), the composed text quoting it, finished with `error`.
 */
async function answered(
  stores: Stores,
  ts: string,
  question: string,
  error: string | null,
): Promise<string> {
  const key = { team: "T1", channel: "C1", threadTs: ts, messageTs: ts, user: "U1" };
  const created = (
    await stores.turns.record({
      assistant: "asst",
      ...key,
      content: question,
      notes: [],
    })
  ).turn;
  const id = created?.id as string;
  const { turns } = stores;
  await turns.recordContent(id, {
    serviceContent: `Earlier in the thread:\n> hello\n\n${question}`,
    contextThroughTs: ts,
    notes: ["Files and images aren't passed on to the assistant."],
  });
  await turns.recordReplyAttempt(id, 0);
  await turns.recordReply(id, [`${ts}1`]);
  await turns.recordPostAttempt(id);
  await turns.recordMessage(id, `msg-${ts}`);
  await turns.recordRunAttempt(id, { maxSteps: 3 });
  await turns.recordRunStart(id, { runId: `run-${ts}`, startedAt: 1 });
  await turns.recordReply(id, [`${ts}1`, `${ts}2`]);
  await turns.finish(id, { outcome: error ? "failed" : "completed", error });
  return id;
}

describe("a purged text in the SQLite file", () => {
  it("is gone from the file and its -wal once purged, while the bot runs and after it stops", async () => {
    const path = join(tempFolder("purged-"), "bridge.db");
    const clock = new ManualClock();
    const stores = openSqliteStores(path, () => clock.now());
    // A 200-character question lives in its row's page; a 9 KB one on overflow pages.
    const short = distinctiveText("SHORT", 200);
    const long = distinctiveText("LONG", 9_000);
    const failure = distinctiveText("FAILURE", 300);
    const texts = [short, long, failure];
    for (let i = 0; i < 20; i++)
      await answered(stores, `1.${i}`, distinctiveText("other", 400), null);
    const purged = [
      await answered(stores, "2.1", short, null),
      await answered(stores, "2.2", long, failure),
    ];
    for (let i = 0; i < 20; i++)
      await answered(stores, `3.${i}`, distinctiveText("other", 400), null);
    // The search finds them where they are.
    expect(sqliteFilesHolding(path, texts).length).toBeGreaterThan(0);

    await clock.advance(31 * DAY);
    const retention = new Retention({
      turns: stores.turns,
      retentionMs: 30 * DAY,
      clock,
      logger: quiet,
    });
    expect(await retention.start()).toBe(42);
    await retention.stop();
    for (const id of purged) {
      expect(await stores.turns.byId(id)).toMatchObject({
        content: "",
        serviceContent: null,
        notes: [],
        error: null,
      });
    }

    expect(sqliteFilesHolding(path, texts)).toEqual([]);
    await stores.close();
    expect(sqliteFilesHolding(path, texts)).toEqual([]);
  });

  it("is gone from a file purged by an older release once this one has opened it", async () => {
    const path = join(tempFolder("purged-"), "bridge.db");
    const question = distinctiveText("OLDER", 9_000);
    const stores = openSqliteStores(path);
    await answered(stores, "1.1", question, null);
    await stores.close();
    // As a release before secure_delete purged it, and left the file at its schema.
    const older = new Database(path);
    older.pragma("secure_delete = OFF");
    older.exec("UPDATE turns SET content = '', service_content = NULL, notes = '[]'");
    older.exec("ALTER TABLE turns DROP COLUMN files");
    older.exec("ALTER TABLE conversation_leases DROP COLUMN taken_from");
    older.pragma("user_version = 15");
    older.close();
    expect(sqliteFilesHolding(path, [question])).toEqual(["bridge.db"]);

    await openSqliteStores(path).close();
    expect(sqliteFilesHolding(path, [question])).toEqual([]);
  });
});
