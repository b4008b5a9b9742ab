import { Kysely, SqliteDialect } from "kysely";
import { type Db, truncateWal } from "../sqlite/db.js";
import type { SqlDatabase } from "./dialect.js";
import type { Schema } from "./schema.js";

/**
 * The query layer over the SQLite file opened by sqlite/db.ts (WAL, fsynced commits,
 * secure_delete, the file's exclusive lock, its migrations). better-sqlite3 answers at once;
 * the statements are the same ones PostgreSQL runs.
 */
export function sqliteDatabase(file: Db): SqlDatabase {
  return {
    db: new Kysely<Schema>({ dialect: new SqliteDialect({ database: file }) }),
    arrival: "rowid",
    afterPurge: async () => truncateWal(file),
  };
}
