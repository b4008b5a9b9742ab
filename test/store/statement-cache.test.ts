import { sql } from "kysely";
import { describe, expect, it, vi } from "vitest";
import { SqlSettingsStore } from "../../src/store/sql/settings.js";
import { sqliteDatabase } from "../../src/store/sql/sqlite-database.js";
import { openDatabase } from "../../src/store/sqlite/db.js";
import { StatementCache } from "../../src/store/sqlite/statement-cache.js";

describe("the SQLite statement cache", () => {
  it("prepares each SQL text once for the query layer, whose answers stay right", async () => {
    const file = openDatabase(":memory:");
    const prepared = vi.spyOn(file, "prepare");
    const { db } = sqliteDatabase(file);
    const settings = new SqlSettingsStore(db, () => 1_000);
    for (let i = 0; i < 500; i++) {
      const scope = { team: "T", channel: `C${i % 7}`, user: `U${i}` };
      await settings.update(scope, { maxSteps: i + 1 });
      expect((await settings.get(scope)).maxSteps).toBe(i + 1);
    }
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM settings`.execute(db);
    expect(rows).toEqual([{ n: 500 }]);
    // A handful of statements, not one per query (1,001 queries).
    expect(prepared.mock.calls.length).toBeLessThan(10);
    await db.destroy();
    expect(file.open).toBe(false);
  });

  it("gives the statement it has for the same SQL", () => {
    const file = openDatabase(":memory:");
    const cache = new StatementCache(file);
    const text = "SELECT ? + 1 AS n";
    const first = cache.prepare(text);
    expect(cache.prepare(text)).toBe(first);
    expect(cache.prepare(`${text} `)).not.toBe(first);
    expect(first.all([41])).toEqual([{ n: 42 }]);
    expect(cache.prepare(text).all([1])).toEqual([{ n: 2 }]);
    cache.close();
  });

  it("keeps at most its limit, dropping the statement used least recently", () => {
    const file = openDatabase(":memory:");
    const cache = new StatementCache(file, 3);
    const [a, b, c] = ["SELECT 1", "SELECT 2", "SELECT 3"].map((text) => cache.prepare(text));
    // a used again: b is the least recently used now.
    expect(cache.prepare("SELECT 1")).toBe(a);
    cache.prepare("SELECT 4");
    expect(cache.size).toBe(3);
    expect(cache.prepare("SELECT 1")).toBe(a);
    expect(cache.prepare("SELECT 3")).toBe(c);
    expect(cache.prepare("SELECT 2")).not.toBe(b);
    for (let i = 0; i < 100; i++) cache.prepare(`SELECT ${i} AS n`);
    expect(cache.size).toBe(3);
    expect(() => new StatementCache(file, 0)).toThrow(RangeError);
    cache.close();
  });

  it("never hands out a statement still iterating: its SQL then gets one of its own", () => {
    const file = openDatabase(":memory:");
    file.exec("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)");
    const cache = new StatementCache(file);
    const text = "SELECT n FROM t ORDER BY n";
    const iterating = cache.prepare(text);
    const rows = iterating.iterate([]);
    rows.next();
    const again = cache.prepare(text);
    expect(again).not.toBe(iterating);
    expect(again.all([])).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    rows.return?.();
    expect(cache.prepare(text)).toBe(iterating);
    cache.close();
  });

  it("streams a select through the query layer, left early or read to the end", async () => {
    const file = openDatabase(":memory:");
    const { db } = sqliteDatabase(file);
    const settings = new SqlSettingsStore(db, () => 1_000);
    for (const user of ["U1", "U2", "U3"]) {
      await settings.update({ team: "T", channel: "C", user }, { maxSteps: 1 });
    }
    const users = () => db.selectFrom("settings").select("user").orderBy("user");
    for await (const row of users().stream()) {
      expect(row.user).toBe("U1");
      break;
    }
    const streamed: string[] = [];
    for await (const row of users().stream()) streamed.push(row.user);
    expect(streamed).toEqual(["U1", "U2", "U3"]);
    expect((await users().execute()).map((row) => row.user)).toEqual(["U1", "U2", "U3"]);
    await db.destroy();
  });

  it("sees a schema change through a statement it keeps", () => {
    const file = openDatabase(":memory:");
    file.exec("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1)");
    const cache = new StatementCache(file);
    expect(cache.prepare("SELECT * FROM t").all([])).toEqual([{ a: 1 }]);
    file.exec("ALTER TABLE t ADD COLUMN b TEXT NOT NULL DEFAULT 'x'");
    expect(cache.prepare("SELECT * FROM t").all([])).toEqual([{ a: 1, b: "x" }]);
    cache.close();
  });

  it("drops its statements when the file closes, however it is closed", () => {
    const file = openDatabase(":memory:");
    const cache = new StatementCache(file);
    cache.prepare("SELECT 1");
    cache.close();
    expect([cache.size, file.open]).toEqual([0, false]);
    expect(() => cache.prepare("SELECT 1")).toThrow(/not open/);
    const other = openDatabase(":memory:");
    const elsewhere = new StatementCache(other);
    elsewhere.prepare("SELECT 1");
    other.close();
    expect(() => elsewhere.prepare("SELECT 1")).toThrow(/not open/);
    expect(elsewhere.size).toBe(0);
  });
});
