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
  // Thread context: how far each conversation has passed its Slack thread on, and the text
  // a turn posts (composed once, so a retry after a crash posts the very same text).
  `ALTER TABLE conversations ADD COLUMN passed_through_ts TEXT;
   ALTER TABLE turns ADD COLUMN service_content TEXT;
   ALTER TABLE turns ADD COLUMN context_through_ts TEXT;`,
  // When the run started (epoch ms): the run timeout counts from it across restarts.
  "ALTER TABLE turns ADD COLUMN run_started_at INTEGER;",
  // The first reply message may have reached Slack: after a crash it is looked for first.
  "ALTER TABLE turns ADD COLUMN reply_post_attempted INTEGER NOT NULL DEFAULT 0;",
  // The turn's state machine (store/turn.ts) says what the post_attempted flag said: a turn
  // with a post sent is `posting`, one with its text fixed but not sent is `composed`.
  `UPDATE turns SET state = 'posting', service_content = COALESCE(service_content, content)
     WHERE state = 'received' AND post_attempted = 1;
   UPDATE turns SET state = 'composed'
     WHERE state = 'received' AND service_content IS NOT NULL;
   ALTER TABLE turns DROP COLUMN post_attempted;`,
  // Who may use the bot: the asking person's organisation, kept apart from `team` (the
  // installation's workspace, which keys the turn). Older turns have none: their `team`
  // was the author's team.
  "ALTER TABLE turns ADD COLUMN author_team TEXT;",
  // The hot queries read only the rows they need, never every turn ever recorded: a person's
  // unfinished turns (the queue limit, /assistant stop and status), all unfinished turns in
  // arrival order (the resume at start), a conversation's posted service messages (the
  // look-up before a question is posted again). Each partial index holds only those rows.
  `DROP INDEX turns_unfinished;
   DROP INDEX turns_by_user;
   CREATE INDEX turns_unfinished_by_arrival ON turns (created_at) WHERE state <> 'finished';
   CREATE INDEX turns_unfinished_by_person ON turns (team, user, channel, created_at)
     WHERE state <> 'finished';
   CREATE INDEX turns_service_messages ON turns (conversation_id, service_message_id)
     WHERE service_message_id IS NOT NULL;`,
  // Retention (RETENTION_DAYS): when a finished turn's texts were purged (null: not yet), and
  // the finished turns still holding texts by when they finished (their last update).
  `ALTER TABLE turns ADD COLUMN texts_purged_at INTEGER;
   CREATE INDEX turns_texts_kept ON turns (updated_at)
     WHERE state = 'finished' AND texts_purged_at IS NULL;`,
  // Feedback on answers (the feedback buttons): each person's latest press per turn, and
  // by when it was pressed, for the retention's purge (RETENTION_DAYS).
  `CREATE TABLE feedback (
     turn_id TEXT NOT NULL,
     user TEXT NOT NULL,
     value TEXT NOT NULL CHECK (value IN ('positive', 'negative')),
     pressed_at INTEGER NOT NULL,
     PRIMARY KEY (turn_id, user)
   );
   CREATE INDEX feedback_by_time ON feedback (pressed_at);`,
  // People: their own access tokens, sealed (AES-256-GCM, people/token-cipher.ts), the
  // assistant chosen per channel and per person, and the look-up from a service thread to
  // its Slack thread (the App Home links a person's threads).
  `CREATE TABLE linked_tokens (
     team TEXT NOT NULL,
     user TEXT NOT NULL,
     sealed BLOB NOT NULL,
     linked_at INTEGER NOT NULL,
     PRIMARY KEY (team, user)
   );
   CREATE TABLE assistant_choices (
     team TEXT NOT NULL,
     scope TEXT NOT NULL CHECK (scope IN ('channel', 'person')),
     key TEXT NOT NULL,
     assistant_id TEXT NOT NULL,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (team, scope, key)
   );
   CREATE INDEX conversations_by_service_thread ON conversations (service_thread_id)
     WHERE service_thread_id IS NOT NULL;`,
  // Who opened each conversation's service thread (a person's id, or "shared"): the service
  // keeps a thread for the token that created it, so only that identity can continue it.
  // Null for threads opened before. And the conversations each person asked in, read from an
  // index (the App Home of a person without a token of their own lists only those).
  `ALTER TABLE conversations ADD COLUMN service_thread_owner TEXT;
   CREATE INDEX turns_by_asker ON turns (team, user, conversation_id);`,
  // Which process runs each conversation's turns (store/stores.ts: LeaseStore), and a
  // conversation's unfinished turns in order (what its lease holder runs next).
  `CREATE TABLE conversation_leases (
     conversation_id INTEGER PRIMARY KEY REFERENCES conversations(id),
     holder TEXT NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX turns_unfinished_by_conversation ON turns (conversation_id, created_at)
     WHERE state <> 'finished';`,
  // The app's installations (SLACK_CLIENT_ID…: several workspaces), one per workspace or per
  // org installed org-wide (team ''); '' for no org. The bot token only sealed
  // (slack/installations/bot-token-seal.ts). A workspace has one installation, whichever org it names.
  `CREATE TABLE installations (
     enterprise TEXT NOT NULL,
     team TEXT NOT NULL,
     team_name TEXT,
     enterprise_name TEXT,
     app_id TEXT,
     bot_user_id TEXT NOT NULL,
     bot_id TEXT NOT NULL,
     bot_scopes TEXT NOT NULL,
     sealed_bot_token BLOB NOT NULL,
     installer_user_id TEXT,
     installed_at INTEGER NOT NULL,
     PRIMARY KEY (enterprise, team),
     CHECK (enterprise <> '' OR team <> '')
   );
   CREATE UNIQUE INDEX installations_by_team ON installations (team) WHERE team <> '';`,
  // A stop asked from a replica that does not run the turn (store/turn.ts: stopRequestedBy).
  "ALTER TABLE turns ADD COLUMN stop_requested_by TEXT;",
  // The org of each workspace an org-wide installation serves, as its requests said
  // (InstallationStore.placeWorkspace).
  `CREATE TABLE workspace_orgs (
     team TEXT PRIMARY KEY,
     enterprise TEXT NOT NULL
   );`,
  // 16: nothing in the schema. From here on `secure_delete` is on (openDatabase), and a file
  // written before (its purged texts may still lie in free space) is VACUUMed once (migrate).
  "-- secure_delete from here on",
  // The files of each question's message, read when its turn runs (files/).
  "ALTER TABLE turns ADD COLUMN files TEXT NOT NULL DEFAULT '[]';",
  // Who held a conversation's lease before its last claim (store/sql/leases.ts), returned by
  // the claim itself: a take-over is told without a read before it.
  "ALTER TABLE conversation_leases ADD COLUMN taken_from TEXT;",
];

/**
 * Files whose schema is older than this were written without `secure_delete`: what their
 * purges and deletes freed may still hold the old texts, so they are rebuilt once (VACUUM).
 */
const SECURE_DELETE_SINCE = 16;

export class DatabaseOpenError extends Error {
  constructor(path: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`Cannot open the database at ${path}: ${reason}${hint(reason)}`, { cause });
    this.name = "DatabaseOpenError";
  }
}

/** What an operator can do about the usual causes. */
function hint(reason: string): string {
  if (/locked|busy/i.test(reason)) {
    return " (another process holds it: is another copy of the bot running on this file?)";
  }
  if (/readonly|read-only|unable to open|EACCES|EROFS|EPERM/i.test(reason)) {
    return " (check that the file and its folder exist and are writable)";
  }
  return "";
}

/**
 * Opens (creating if needed) the SQLite file, in WAL mode, and brings its schema up to
 * date. Fails with one clear error when the file is locked, read-only or corrupt, or its
 * schema is newer than this code.
 *
 * The connection holds an exclusive lock on the file for as long as it is open: a second
 * copy of the bot on the same file would resume the same turns and answer them twice, so
 * it fails at its start instead ("database is locked", after a 5 s wait).
 */
export function openDatabase(path: string): Db {
  let db: Db | undefined;
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    db = new Database(path, { timeout: 5_000 });
    // Before WAL: the WAL index then lives in this process's memory, not in a shared file.
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    // A commit is in the operating system's hands when it returns (it survives the process
    // being killed), not yet on the disk: what must survive a power cut too (a question
    // before Slack is told it arrived, an attempt before its request leaves) is awaited
    // through WalSync (wal-sync.ts), one fdatasync of the log on libuv's thread pool shared by
    // the commits made together. FULL synced the log at every commit on the event loop (about
    // ten a turn, 1.5 ms each on the project's VM), and a question arriving meanwhile waited
    // for all of them before it was acknowledged.
    db.pragma("synchronous = NORMAL");
    // What a purge or a delete frees is overwritten with zeros, in the row's page and in the
    // overflow pages a long text takes, instead of being left in free space where the file
    // would still hold it (store/retention.ts). FAST would leave freed overflow pages as they
    // were, so a long question would stay readable. What it costs is measured in
    // bench/secure-delete.ts (README, "What is kept, and for how long").
    db.pragma("secure_delete = ON");
    db.pragma("foreign_keys = ON");
    // Takes the lock now (it is kept until close), so a conflict shows at start.
    db.exec("BEGIN EXCLUSIVE; COMMIT;");
    migrate(db);
    return db;
  } catch (error) {
    db?.close();
    throw new DatabaseOpenError(path, error);
  }
}

function migrate(db: Db): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  // A newer release's schema (and what its turns' states mean) is not this code's to guess.
  if (current > MIGRATIONS.length) {
    throw new Error(
      `its schema is version ${current}, but this version of the bot knows versions up to ${MIGRATIONS.length}: the file was written by a newer release of the bot. Run that release (or a later one) on it, or set DATABASE_PATH to another file`,
    );
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    const sql = MIGRATIONS[version] as string;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
  // A file from before secure_delete: rebuilt without its free space (the purged texts in it).
  if (current > 0 && current < SECURE_DELETE_SINCE) {
    db.exec("VACUUM");
    truncateWal(db);
  }
}

/**
 * Copies the WAL into the file and empties it (TRUNCATE), so that the page images written
 * before a purge (which hold the texts it removed) are gone from the -wal file too. Without
 * it they would stay there until overwritten by later writes. The file itself holds the
 * purged pages only as zeros (secure_delete).
 */
export function truncateWal(db: Db): void {
  db.pragma("wal_checkpoint(TRUNCATE)");
}
