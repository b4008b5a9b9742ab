import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

export type Db = Database.Database;

/**
 * Schema migrations, applied in order at start; `PRAGMA user_version` records how many
 * ran. Never edit a shipped migration: add a new one.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE conversations (
     id INTEGER PRIMARY KEY,
     team TEXT NOT NULL,
     channel TEXT NOT NULL,
     thread_ts TEXT NOT NULL,
     assistant_id TEXT NOT NULL,
     service_thread_id TEXT,
     created_at INTEGER NOT NULL,
     UNIQUE (team, channel, thread_ts)
   );
   CREATE TABLE turns (
     id TEXT PRIMARY KEY,
     conversation_id INTEGER NOT NULL REFERENCES conversations(id),
     team TEXT NOT NULL,
     channel TEXT NOT NULL,
     thread_ts TEXT NOT NULL,
     message_ts TEXT NOT NULL,
     user TEXT NOT NULL,
     content TEXT NOT NULL,
     notes TEXT NOT NULL DEFAULT '[]',
     state TEXT NOT NULL,
     outcome TEXT,
     post_attempted INTEGER NOT NULL DEFAULT 0,
     service_message_id TEXT,
     run_id TEXT,
     reply_ts TEXT,
     reply_parts TEXT NOT NULL DEFAULT '[]',
     settings TEXT,
     model_used TEXT,
     error TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     UNIQUE (team, channel, message_ts)
   );
   CREATE INDEX turns_unfinished ON turns (state) WHERE state <> 'finished';
   CREATE INDEX turns_by_user ON turns (team, channel, user, state);
   CREATE TABLE settings (
     team TEXT NOT NULL,
     channel TEXT NOT NULL,
     user TEXT NOT NULL,
     model_override TEXT,
     reasoning_effort TEXT,
     max_steps INTEGER,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (team, channel, user)
   );`,
];

export class DatabaseOpenError extends Error {
  constructor(path: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Cannot open the database at ${path}: ${reason}`, { cause });
    this.name = "DatabaseOpenError";
  }
}

/**
 * Opens (creating if needed) the SQLite file, in WAL mode, and brings its schema up to
 * date. Fails with one clear error when the file is locked, read-only or corrupt.
 */
export function openDatabase(path: string): Db {
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path, { timeout: 5_000 });
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    migrate(db);
    return db;
  } catch (error) {
    throw new DatabaseOpenError(path, error);
  }
}

function migrate(db: Db): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let version = current; version < MIGRATIONS.length; version++) {
    const sql = MIGRATIONS[version] as string;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
