import type Database from "better-sqlite3";
import type { SqliteDatabase, SqliteStatement } from "kysely";
import type { Db } from "./db.js";

/**
 * Statements kept by default: the stores make a few dozen (more with the lengths of their
 * `IN` lists), so they are all kept with room to spare.
 */
export const STATEMENTS_KEPT = 256;

/**
 * The SQLite file as the query layer sees it (Kysely's SqliteDialect), with each statement
 * prepared once: Kysely prepares the SQL of every query it runs, and preparing cost more of
 * the event loop than running most of the stores' statements. The last `limit` statements used
 * are kept (least recently used dropped first), so a long-running bot does not grow.
 *
 * A statement kept is never used while it runs: Kysely runs `all` and `run` to the end at
 * once, but streams a select with `iterate`, and a statement still iterating is `busy` (and
 * better-sqlite3 refuses to run it again): its SQL then gets a statement of its own. After a
 * schema change SQLite prepares a kept statement again by itself (better-sqlite3's statements
 * are prepared with sqlite3_prepare_v3). Closing drops every statement with the file.
 */
export class StatementCache implements SqliteDatabase {
  /** By SQL text, the least recently used first. */
  private readonly kept = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Db,
    private readonly limit = STATEMENTS_KEPT,
  ) {
    if (!(limit >= 1)) throw new RangeError(`a statement cache keeps at least one, not ${limit}`);
  }

  /** How many statements are kept now. */
  get size(): number {
    return this.kept.size;
  }

  prepare(sql: string): SqliteStatement {
    if (!this.db.open) {
      // Closed elsewhere: what was kept is gone with it (and prepare says why).
      this.kept.clear();
      return this.db.prepare(sql);
    }
    const found = this.kept.get(sql);
    if (found !== undefined) {
      if (found.busy) return this.db.prepare(sql);
      this.kept.delete(sql);
      this.kept.set(sql, found);
      return found;
    }
    const statement = this.db.prepare(sql);
    this.kept.set(sql, statement);
    if (this.kept.size > this.limit) this.kept.delete(this.kept.keys().next().value as string);
    return statement;
  }

  /** Drops every statement and closes the file (Kysely's destroy). */
  close(): void {
    this.kept.clear();
    this.db.close();
  }
}
