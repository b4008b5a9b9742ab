/**
 * Turns are kept for good (their texts are purged, their rows stay), so a query whose cost
 * follows the table grows with every question ever asked. SQLite's own query plans say which
 * rows each statement of the turn store reads.
 */
import { Kysely, SqliteDialect } from "kysely";
import { describe, expect, it, vi } from "vitest";
import { SqlFeedbackStore } from "../../src/store/sql/feedback.js";
import type { Schema } from "../../src/store/sql/schema.js";
import { type Db, openDatabase } from "../../src/store/sqlite/db.js";
import { SqliteTurnStore } from "../../src/store/sqlite/turns.js";

/** Every statement the turn store prepares, and the database they run on. */
function turnStatements(): { db: Db; statements: string[] } {
  const db = openDatabase(":memory:");
  const prepare = vi.spyOn(db, "prepare");
  new SqliteTurnStore(db);
  const statements = prepare.mock.calls.map(([sql]) => sql);
  prepare.mockRestore();
  return { db, statements };
}

/** The plan's lines for `sql`, every parameter bound to null. */
function planOf(db: Db, sql: string): string[] {
  const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map(([, name]) => [name, null]));
  const positional = (sql.match(/\?/g) ?? []).map(() => null);
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const rows = (Object.keys(named).length > 0 ? plan.all(named) : plan.all(...positional)) as {
    detail: string;
  }[];
  return rows.map((row) => row.detail);
}

/** The condition of a partial index (what it holds), or undefined for a full one. */
function indexCondition(db: Db, name: string): string | undefined {
  const row = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?")
    .get(name) as { sql: string | null } | undefined;
  return /\bWHERE\b(.*)$/is
    .exec(row?.sql ?? "")?.[1]
    ?.replace(/\s+/g, " ")
    .trim();
}

const { db, statements } = turnStatements();
const statement = (pattern: RegExp) => {
  const found = statements.filter((sql) => pattern.test(sql));
  expect(found, String(pattern)).toHaveLength(1);
  return found[0] as string;
};

describe("the turn store's queries", () => {
  it("all read through an index, in the order they need, never the whole table", () => {
    const reads = statements.filter((sql) => /\bWHERE\b/.test(sql));
    expect(reads.length).toBeGreaterThanOrEqual(8);
    for (const sql of reads) {
      for (const line of planOf(db, sql)) {
        expect(line, sql).not.toMatch(/^SCAN turns$/);
        expect(line, sql).not.toMatch(/TEMP B-TREE/);
        // A scan is over a partial index, which holds only the rows the query is about.
        const scanned = /^SCAN turns USING (?:COVERING )?INDEX (\w+)/.exec(line)?.[1];
        if (scanned) expect(indexCondition(db, scanned), `${scanned} for ${sql}`).toBeDefined();
      }
    }
  });

  it.each([
    [
      "a person's unfinished turns in the workspace (the queue limit)",
      /COUNT\(\*\)/,
      ["team", "user"],
    ],
    [
      "a person's unfinished turns in a channel",
      /SELECT \* .*channel = \? AND user = \?/s,
      ["team", "user", "channel"],
    ],
  ])("%s come from an index of unfinished turns only", (_what, pattern, keys) => {
    const plan = planOf(db, statement(pattern));
    const used = /^SEARCH turns USING (?:COVERING )?INDEX (\w+) \((.*)\)$/.exec(plan[0] ?? "");
    expect(plan, "plan").toHaveLength(1);
    expect(used?.[2]).toBe(keys.map((key) => `${key}=?`).join(" AND "));
    expect(indexCondition(db, used?.[1] ?? "")).toBe("state <> 'finished'");
  });

  it("unfinished turns overall come from an index of unfinished turns, in arrival order", () => {
    const plan = planOf(db, statement(/^SELECT \* FROM turns WHERE state <> 'finished' ORDER BY/));
    const used = /^SCAN turns USING INDEX (\w+)$/.exec(plan[0] ?? "");
    expect(plan, "plan").toHaveLength(1);
    expect(indexCondition(db, used?.[1] ?? "")).toBe("state <> 'finished'");
  });

  it("a conversation's service messages are looked up by conversation", () => {
    const plan = planOf(db, statement(/service_message_id IS NOT NULL/));
    expect(plan).toEqual([
      expect.stringMatching(/^SEARCH turns USING COVERING INDEX \w+ \(conversation_id=\?[^)]*\)$/),
    ]);
  });

  it("the conversations a person asked in come from an index, each once, without sorting", () => {
    const plan = planOf(db, statement(/SELECT DISTINCT conversation_id/));
    expect(plan).toEqual([
      expect.stringMatching(
        /^SEARCH turns USING COVERING INDEX turns_by_asker \(team=\? AND user=\?\)$/,
      ),
    ]);
  });

  it("the retention's purge finds the turns due by when they finished", () => {
    const plan = planOf(db, statement(/^UPDATE turns SET content = ''/));
    expect(plan).toContainEqual(
      expect.stringMatching(/^SEARCH turns USING INDEX \w+ \(updated_at<\?\)$/),
    );
    expect(plan).toContainEqual(expect.stringMatching(/^SEARCH turns USING INTEGER PRIMARY KEY/));
  });
});

describe("the feedback store's queries", () => {
  /** The statements the query layer compiles for a turn's presses and the retention's purge. */
  async function feedbackStatements(): Promise<{ db: Db; reads: string; purge: string }> {
    const db = openDatabase(":memory:");
    const statements: string[] = [];
    const store = new SqlFeedbackStore({
      db: new Kysely<Schema>({
        dialect: new SqliteDialect({ database: db }),
        log: (event) => {
          statements.push(event.query.sql);
        },
      }),
      arrival: "rowid",
      afterPurge: async () => undefined,
    });
    await store.forTurn("turn-1");
    await store.purge(1_000, 10);
    const [reads, purge] = statements as [string, string];
    return { db, reads, purge };
  }

  it("read a turn's presses by the turn, and the retention's by when they were pressed", async () => {
    const { db, reads, purge } = await feedbackStatements();
    // One turn's presses (one per person who pressed) are sorted in the store, never the table.
    expect(planOf(db, reads)).toEqual([
      expect.stringMatching(
        /^SEARCH feedback USING INDEX sqlite_autoindex_feedback_1 \(turn_id=\?\)$/,
      ),
    ]);
    const plan = planOf(db, purge);
    expect(plan).toContainEqual(
      expect.stringMatching(
        /^SEARCH feedback USING (?:COVERING )?INDEX feedback_by_time \(pressed_at<\?\)$/,
      ),
    );
    expect(plan.join("\n")).not.toMatch(/SCAN feedback|TEMP B-TREE/);
  });
});
