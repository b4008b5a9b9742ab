import pg from "pg";

/**
 * Schema migrations, applied in order at open; `schema_version` records each one applied.
 * Never edit a shipped migration: add a new one.
 *
 * The first is the whole schema as SQLite's migrations (sqlite/db.ts) leave it today, in
 * PostgreSQL's types: PostgreSQL has no older databases to carry forward. Times are BIGINT
 * epoch ms, as in SQLite, so every store reads and writes the same numbers. The turns' lists
 * and settings stay JSON in TEXT: one row mapping (store/turn-rows.ts) serves both databases.
 * `user` is a reserved word here, so that column is always written quoted.
 */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE conversations (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     team TEXT NOT NULL,
     channel TEXT NOT NULL,
     thread_ts TEXT NOT NULL,
     assistant_id TEXT NOT NULL,
     service_thread_id TEXT,
     service_thread_owner TEXT,
     passed_through_ts TEXT,
     created_at BIGINT NOT NULL,
     UNIQUE (team, channel, thread_ts)
   );
   CREATE INDEX conversations_by_service_thread ON conversations (service_thread_id)
     WHERE service_thread_id IS NOT NULL;
   -- seq is arrival order (SQLite's rowid): the tiebreaker of turns that share a created_at.
   CREATE TABLE turns (
     id TEXT PRIMARY KEY,
     seq BIGINT GENERATED ALWAYS AS IDENTITY,
     conversation_id BIGINT NOT NULL REFERENCES conversations (id),
     team TEXT NOT NULL,
     channel TEXT NOT NULL,
     thread_ts TEXT NOT NULL,
     message_ts TEXT NOT NULL,
     "user" TEXT NOT NULL,
     author_team TEXT NOT NULL,
     content TEXT NOT NULL,
     notes TEXT NOT NULL DEFAULT '[]',
     state TEXT NOT NULL,
     outcome TEXT,
     service_content TEXT,
     context_through_ts TEXT,
     service_message_id TEXT,
     run_id TEXT,
     settings TEXT,
     run_started_at BIGINT,
     reply_post_attempted INTEGER NOT NULL DEFAULT 0,
     reply_ts TEXT,
     reply_parts TEXT NOT NULL DEFAULT '[]',
     model_used TEXT,
     error TEXT,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     texts_purged_at BIGINT,
     UNIQUE (team, channel, message_ts)
   );
   CREATE INDEX turns_unfinished_by_arrival ON turns (created_at, seq) WHERE state <> 'finished';
   CREATE INDEX turns_unfinished_by_person ON turns (team, "user", channel, created_at, seq)
     WHERE state <> 'finished';
   CREATE INDEX turns_unfinished_by_conversation ON turns (conversation_id, created_at, seq)
     WHERE state <> 'finished';
   CREATE INDEX turns_service_messages ON turns (conversation_id, service_message_id)
     WHERE service_message_id IS NOT NULL;
   CREATE INDEX turns_texts_kept ON turns (updated_at)
     WHERE state = 'finished' AND texts_purged_at IS NULL;
   CREATE INDEX turns_by_asker ON turns (team, "user", conversation_id);
   CREATE TABLE settings (
     team TEXT NOT NULL,
     channel TEXT NOT NULL,
     "user" TEXT NOT NULL,
     model_override TEXT,
     reasoning_effort TEXT,
     max_steps INTEGER,
     updated_at BIGINT NOT NULL,
     PRIMARY KEY (team, channel, "user")
   );
   CREATE TABLE feedback (
     turn_id TEXT NOT NULL,
     "user" TEXT NOT NULL,
     value TEXT NOT NULL CHECK (value IN ('positive', 'negative')),
     pressed_at BIGINT NOT NULL,
     PRIMARY KEY (turn_id, "user")
   );
   CREATE INDEX feedback_by_time ON feedback (pressed_at);
   CREATE TABLE linked_tokens (
     team TEXT NOT NULL,
     "user" TEXT NOT NULL,
     sealed BYTEA NOT NULL,
     linked_at BIGINT NOT NULL,
     PRIMARY KEY (team, "user")
   );
   CREATE TABLE assistant_choices (
     team TEXT NOT NULL,
     scope TEXT NOT NULL CHECK (scope IN ('channel', 'person')),
     key TEXT NOT NULL,
     assistant_id TEXT NOT NULL,
     updated_at BIGINT NOT NULL,
     PRIMARY KEY (team, scope, key)
   );
   CREATE TABLE conversation_leases (
     conversation_id BIGINT PRIMARY KEY REFERENCES conversations (id),
     holder TEXT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX conversation_leases_by_holder ON conversation_leases (holder);`,
  // Many workspaces: the app's installations, one per workspace (team) or org-wide org
  // (team ''), their bot tokens sealed (slack/installations/bot-token-seal.ts). As sqlite/db.ts's 13th.
  `CREATE TABLE installations (
     enterprise TEXT NOT NULL,
     team TEXT NOT NULL,
     team_name TEXT,
     enterprise_name TEXT,
     app_id TEXT,
     bot_user_id TEXT NOT NULL,
     bot_id TEXT NOT NULL,
     bot_scopes TEXT NOT NULL,
     sealed_bot_token BYTEA NOT NULL,
     installer_user_id TEXT,
     installed_at BIGINT NOT NULL,
     PRIMARY KEY (enterprise, team),
     CHECK (enterprise <> '' OR team <> '')
   );
   CREATE UNIQUE INDEX installations_by_team ON installations (team) WHERE team <> '';`,
  // 3: the rate budgets replicas share (budgets/postgres/), each keyed by a string that
  // names it (`slack:T123:chat.update`, `service:token:<fingerprint>:run_start`), never a
  // secret. UNLOGGED: a take commits without waiting for the disk, and what a crash of the
  // server loses is at most a minute of budget, which Slack's and the service's own limits
  // cover. Times are epoch ms as DOUBLE PRECISION: a GCRA arrival time is fractional, and the
  // server's arithmetic on it must be JavaScript's (IEEE doubles both).
  `CREATE UNLOGGED TABLE budget_buckets (
     key TEXT PRIMARY KEY,
     arrival DOUBLE PRECISION NOT NULL
   );
   CREATE UNLOGGED TABLE budget_slots (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     key TEXT NOT NULL,
     until_at DOUBLE PRECISION NOT NULL,
     held BOOLEAN NOT NULL
   );
   CREATE INDEX budget_slots_by_key ON budget_slots (key, until_at);
   CREATE UNLOGGED TABLE budget_pauses (
     key TEXT PRIMARY KEY,
     paused_until DOUBLE PRECISION NOT NULL
   );`,
  // 4: a stop asked from a replica that does not run the turn (store/turn.ts: stopRequestedBy).
  "ALTER TABLE turns ADD COLUMN stop_requested_by TEXT;",
  // 5: who waits for a shared bucket, so that replicas take its tokens oldest call first
  // (budgets/postgres/waiters.ts), UNLOGGED as the other budgets are; a slot's take as
  // one call (budgets/postgres/slots.ts), under the advisory lock class "budg"; the org
  // of each workspace an org-wide installation serves (InstallationStore.placeWorkspace).
  `CREATE UNLOGGED TABLE budget_waiters (
     key TEXT NOT NULL,
     holder TEXT NOT NULL,
     rank DOUBLE PRECISION NOT NULL,
     live_until DOUBLE PRECISION NOT NULL,
     PRIMARY KEY (key, holder)
   );
   CREATE TABLE workspace_orgs (
     team TEXT PRIMARY KEY,
     enterprise TEXT NOT NULL
   );
   CREATE FUNCTION budget_occupy(
     k TEXT, now_ms DOUBLE PRECISION, max_slots INTEGER, until_ms DOUBLE PRECISION,
     is_held BOOLEAN, prune_ms DOUBLE PRECISION
   ) RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $$
   DECLARE
     taken BIGINT;
   BEGIN
     PERFORM pg_advisory_xact_lock(1651860583, hashtext(k));
     DELETE FROM budget_slots WHERE key = k AND until_at <= now_ms - prune_ms;
     IF (SELECT count(*) FROM budget_slots WHERE key = k AND until_at > now_ms) >= max_slots
        OR EXISTS (SELECT 1 FROM budget_pauses WHERE key = k AND paused_until > now_ms) THEN
       RETURN NULL;
     END IF;
     INSERT INTO budget_slots (key, until_at, held) VALUES (k, until_ms, is_held)
       RETURNING id INTO taken;
     RETURN taken;
   END $$;`,
  // 6: the files of each question's message, read when its turn runs (files/).
  "ALTER TABLE turns ADD COLUMN files TEXT NOT NULL DEFAULT '[]';",
  // 7: budget_occupy for several slots at once, as many as there is room for: a lane with
  // many requests waiting takes their slots in one round trip, not one round trip each.
  `CREATE FUNCTION budget_take_slots(
     k TEXT, now_ms DOUBLE PRECISION, max_slots INTEGER, until_ms DOUBLE PRECISION,
     is_held BOOLEAN, prune_ms DOUBLE PRECISION, wanted INTEGER
   ) RETURNS BIGINT[] LANGUAGE plpgsql VOLATILE AS $$
   DECLARE
     room INTEGER;
     taken BIGINT[];
   BEGIN
     PERFORM pg_advisory_xact_lock(1651860583, hashtext(k));
     DELETE FROM budget_slots WHERE key = k AND until_at <= now_ms - prune_ms;
     IF EXISTS (SELECT 1 FROM budget_pauses WHERE key = k AND paused_until > now_ms) THEN
       RETURN '{}';
     END IF;
     room := LEAST(wanted, max_slots - (SELECT count(*) FROM budget_slots
                                         WHERE key = k AND until_at > now_ms));
     IF room <= 0 THEN
       RETURN '{}';
     END IF;
     WITH made AS (
       INSERT INTO budget_slots (key, until_at, held)
       SELECT k, until_ms, is_held FROM generate_series(1, room)
       RETURNING id
     )
     SELECT array_agg(id ORDER BY id) INTO taken FROM made;
     RETURN taken;
   END $$;`,
  // 8: how many tokens a bucket's last take took (budgets/postgres/bucket.ts), returned by
  // the take itself: a take may be for several calls, and the row it updated may be newer
  // than the one its statement read.
  "ALTER TABLE budget_buckets ADD COLUMN took INTEGER NOT NULL DEFAULT 1;",
  // 9: who held a conversation's lease before its last claim (store/sql/leases.ts), returned
  // by the claim itself: a take-over is told without a read before it.
  "ALTER TABLE conversation_leases ADD COLUMN taken_from TEXT;",
];

/**
 * The advisory lock under which migrations run (with the schema's name as its second key):
 * replicas starting together take turns, and the first applies what is missing while the
 * others wait, then find nothing left to do.
 */
const MIGRATION_LOCK = 0x6272_6467; // "brdg"

/** What the migrations are run on: a `pg` client (a pool's, or one of its own). */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * Brings the schema up to date, in one transaction under the advisory lock: creates the
 * schema if missing, then applies each migration not yet recorded. Refuses a schema newer
 * than this code. `client` runs in `schema` (its search_path) when one is given.
 *
 * Every statement keeps the connection's time limits (sql/postgres-pool.ts: the lock wait and
 * each statement 5 s, each call 10 s by default): a replica that waits longer than that for
 * another's migration fails to start, with that error, and starts again once restarted. A
 * future migration too slow for them must be run another way, not waited for here.
 */
export async function migrate(
  client: Queryable,
  schema: string | undefined,
  now: () => number = Date.now,
): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(
      "SELECT pg_advisory_xact_lock($1, hashtext(COALESCE($2::text, current_schema(), '')))",
      [MIGRATION_LOCK, schema ?? null],
    );
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)",
    );
    const { rows } = await client.query("SELECT MAX(version) AS version FROM schema_version");
    const current = Number(rows[0]?.version ?? 0);
    // A newer release's schema (and what its turns' states mean) is not this code's to guess.
    if (current > MIGRATIONS.length) {
      throw new Error(
        `its schema is version ${current}, but this version of the bot knows versions up to ${MIGRATIONS.length}: the database was written by a newer release of the bot. Run that release (or a later one) on it, or point DATABASE_URL at another database`,
      );
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
      await client.query(MIGRATIONS[version] as string);
      await client.query("INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)", [
        version + 1,
        now(),
      ]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/**
 * Migrates the schema of the database at `url` on a connection of its own, then closes it:
 * for what uses the schema without the stores (the shared budgets' tests and bench).
 */
export async function migratePostgres(url: string, schema?: string): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  });
  await client.connect();
  try {
    await migrate(client, schema);
  } finally {
    await client.end();
  }
}
