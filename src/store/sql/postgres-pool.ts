import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { SqlDatabase } from "./dialect.js";
import type { Schema } from "./schema.js";

export interface PostgresPoolOptions {
  /** The schema every statement runs in (`search_path`); default the server's. */
  schema?: string | undefined;
  /** How long a query may wait for its answer before it fails, ms; default 10_000. */
  callTimeoutMs?: number | undefined;
  /** The server's `statement_timeout` and `lock_timeout`, ms; default 5_000. */
  statementTimeoutMs?: number | undefined;
  /** How long opening a connection may take, ms; default 5_000. */
  connectTimeoutMs?: number | undefined;
  /** Connections at most; default 10. */
  max?: number | undefined;
  /** A connection the pool held idle failed (the server went away): for the log. */
  onIdleError?: ((error: Error) => void) | undefined;
}

/** BIGINT (int8) read as a number: the columns hold epoch ms, ids and counts, far below 2^53. */
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8
      ? (text: string) => Number(text)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * The query layer over a pool of `pg` connections: every statement is awaited, never waited
 * for on the event loop. Each connection runs in `schema` with the server's time limits set,
 * so nothing waits for ever: a statement (or a lock wait) is cancelled by the server after
 * `statementTimeoutMs`, and a query with no answer fails after `callTimeoutMs`.
 */
export function postgresDatabase(url: string, options: PostgresPoolOptions = {}): SqlDatabase {
  const statementTimeoutMs = options.statementTimeoutMs ?? 5_000;
  const pool = new pg.Pool({
    connectionString: url,
    application_name: "slack-assistant-bridge",
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    query_timeout: options.callTimeoutMs ?? 10_000,
    statement_timeout: statementTimeoutMs,
    lock_timeout: statementTimeoutMs,
    // A transaction idle that long belongs to a stuck caller: its row locks are let go.
    idle_in_transaction_session_timeout: 6 * statementTimeoutMs,
    keepAlive: true,
    types,
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
  });
  // An idle connection that breaks must not end the process ('error' unheard would).
  pool.on("error", (error) => options.onIdleError?.(error));
  return {
    db: new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) }),
    arrival: "seq",
    unfinishedByPerson: sql.raw("turns"),
    afterPurge: async () => undefined,
  };
}
