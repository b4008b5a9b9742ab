/**
 * Turns are kept for good (their texts are purged, their rows stay), so a query whose cost
 * follows the table grows with every question ever asked. SQLite's own query plans say which
 * rows each statement of the turn store reads.
 */
import { describe, expect, it } from "vitest";
import { SqlConversationStore } from "../../src/store/sql/conversations.js";
import { SqlFeedbackStore } from "../../src/store/sql/feedback.js";
import { sqliteDatabase } from "../../src/store/sql/sqlite-database.js";
import { SqlTurnStore } from "../../src/store/sql/turns.js";
import { type Db, openDatabase } from "../../src/store/sqlite/db.js";

/**
 * Every statement the turn store runs (each of its methods called once, a transition
 * included), as the query layer compiles it for SQLite, and the database they run on.
 */
async function turnStatements(): Promise<{ db: Db; statements: string[] }> {
  const db = openDatabase(":memory:");
  const statements: string[] = [];
  const queries = sqliteDatabase(db, (sql) => statements.push(sql.replace(/"/g, "")));
  const turns = new SqlTurnStore(queries);
  const key = { team: "T", channel: "C", threadTs: "1.1" };
  const c = await new SqlConversationStore(queries.db).ensure(key, "a");
  const asked = { messageTs: "1.1", user: "U", content: "q", notes: [] };
  const t = (await turns.record({ conversation: c, assistant: c.assistantId, ...key, ...asked }))
    .turn;
  await turns.recordContent(t?.id ?? "", {
    serviceContent: "q",
    contextThroughTs: null,
    notes: [],
  });
  await turns.byId("x");
  await turns.byMessage("T", "C", "1.1");
  await turns.unfinished();
  await turns.unfinishedIn(c.id);
  await turns.unfinishedInAny([c.id, c.id + 1]);
  await turns.activeFor("T", "C", "U");
  await turns.unfinishedCountBy("T", "U");
  await turns.conversationsAskedIn("T", "U");
  await turns.serviceMessageIds(c.id);
  await turns.requestStop("x", "U");
  await turns.purgeTexts(0, 10);
  return { db, statements: statements.filter((sql) => /\bturns\b/i.test(sql)) };
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

const { db, statements } = await turnStatements();
const statement = (pattern: RegExp) => {
  const found = statements.filter((sql) => pattern.test(sql));
  expect(found, String(pattern)).toHaveLength(1);
  return found[0] as string;
};

describe("the turn store's queries", () => {
  it("all read through an index, in the order they need, never the whole table", () => {
    const reads = statements.filter((sql) => /\bWHERE\b/i.test(sql));
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
      /SELECT \* .*channel = \? AND user = \?/is,
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
    const plan = planOf(db, statement(/^SELECT \* FROM turns WHERE state <> 'finished' ORDER BY/i));
    const used = /^SCAN turns USING INDEX (\w+)$/.exec(plan[0] ?? "");
    expect(plan, "plan").toHaveLength(1);
    expect(indexCondition(db, used?.[1] ?? "")).toBe("state <> 'finished'");
  });

  it("a conversation's service messages are looked up by conversation", () => {
    const plan = planOf(db, statement(/service_message_id IS NOT NULL/i));
    expect(plan).toEqual([
      expect.stringMatching(/^SEARCH turns USING COVERING INDEX \w+ \(conversation_id=\?[^)]*\)$/),
    ]);
  });

  it("the conversations a person asked in come from an index, each once, without sorting", () => {
    const plan = planOf(db, statement(/SELECT DISTINCT conversation_id/i));
    expect(plan).toEqual([
      expect.stringMatching(
        /^SEARCH turns USING COVERING INDEX turns_by_asker \(team=\? AND user=\?\)$/,
      ),
    ]);
  });

  it("the retention's purge finds the turns due by when they finished", () => {
    const plan = planOf(db, statement(/^UPDATE turns SET content = /i));
    expect(plan).toContainEqual(
      expect.stringMatching(/^SEARCH turns USING INDEX \w+ \(updated_at<\?\)$/),
    );
    // Each turn due is then found by its key (the primary key's index), never by a scan.
    expect(plan).toContainEqual(
      expect.stringMatching(/^SEARCH turns USING INDEX sqlite_autoindex_turns_1 \(id=\?\)$/),
    );
  });
});

describe("the feedback store's queries", () => {
  /** The statements the query layer compiles for a turn's presses and the retention's purge. */
  async function feedbackStatements(): Promise<{ db: Db; reads: string; purge: string }> {
    const db = openDatabase(":memory:");
    const statements: string[] = [];
    const store = new SqlFeedbackStore(sqliteDatabase(db, (sql) => statements.push(sql)));
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
