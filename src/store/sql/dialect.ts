import type { Kysely, RawBuilder } from "kysely";
import type { Schema } from "./schema.js";

/**
 * What differs between the two databases, as values rather than as second copies of the
 * statements: every store builds its statements once, over `db`, and asks this for the rest.
 */
export interface SqlDatabase {
  db: Kysely<Schema>;
  /**
   * Where the statements Slack's acknowledgement waits for run (a question's record, the
   * count of a person's waiting questions): PostgreSQL's bots give them connections of their
   * own, so that they never queue behind the statements of the turns being answered. Absent:
   * on `db`.
   */
  acknowledging?: Kysely<Schema>;
  /**
   * The column that orders turns recorded in the same millisecond by arrival: SQLite's
   * `rowid`, PostgreSQL's `seq` (an identity column: it has no rowid).
   */
  arrival: "rowid" | "seq";
  /**
   * The table clause a person's unfinished turns are counted from (the queue limit): SQLite
   * is told the partial index of unfinished turns by person (`INDEXED BY`), since
   * turns_by_asker matches the same (team, user) and holds every turn ever asked;
   * PostgreSQL's planner needs no hint.
   */
  unfinishedByPerson: RawBuilder<unknown>;
  /**
   * After a purge that changed rows. SQLite: the WAL emptied (sqlite/db.ts truncateWal), so
   * it keeps no page image of the texts removed; PostgreSQL: nothing (its operator's VACUUM).
   */
  afterPurge(): Promise<void>;
  /**
   * Whether a WITH may hold an INSERT (PostgreSQL's data-modifying WITH), so that writes to
   * two tables go in one statement, one round trip; SQLite runs them one after the other.
   */
  writesInWith: boolean;
}
