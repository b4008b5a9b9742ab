import type { Kysely } from "kysely";
import type { Schema } from "./schema.js";

/**
 * What differs between the two databases, as values rather than as second copies of the
 * statements: every store builds its statements once, over `db`, and asks this for the rest.
 */
export interface SqlDatabase {
  db: Kysely<Schema>;
  /**
   * The column that orders turns recorded in the same millisecond by arrival: SQLite's
   * `rowid`, PostgreSQL's `seq` (an identity column: it has no rowid).
   */
  arrival: "rowid" | "seq";
  /**
   * After a purge that changed rows. SQLite: the WAL emptied (sqlite/db.ts truncateWal), so
   * it keeps no page image of the texts removed; PostgreSQL: nothing (its operator's VACUUM).
   */
  afterPurge(): Promise<void>;
}
