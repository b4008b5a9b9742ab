import { Kysely, type LogEvent, SqliteDialect, sql } from "kysely";
import { type Db, truncateWal } from "../sqlite/db.js";
import { StatementCache } from "../sqlite/statement-cache.js";
import type { SqlDatabase } from "./dialect.js";
import type { Schema } from "./schema.js";

/**
 * The query layer over the SQLite file opened by sqlite/db.ts (WAL, fsynced commits,
 * secure_delete, the file's exclusive lock, its migrations). better-sqlite3 answers at once;
 * the statements are the same ones PostgreSQL runs, each prepared once (statement-cache.ts).
 */
export function sqliteDatabase(
  file: Db,
  /** Told each statement's SQL as it runs (the query-plan tests read them); default nothing. */
  onStatement?: (sql: string) => void,
): SqlDatabase {
  const log = onStatement && ((event: LogEvent) => onStatement(event.query.sql));
  return {
    db: new Kysely<Schema>({
      dialect: new SqliteDialect({ database: new StatementCache(file) }),
      ...(log && { log }),
    }),
    arrival: "rowid",
    unfinishedByPerson: sql.raw("turns INDEXED BY turns_unfinished_by_person"),
    writesInWith: false,
    afterPurge: async () => truncateWal(file),
  };
}
