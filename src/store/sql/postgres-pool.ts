import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { SqlDatabase } from "./dialect.js";
import { prepareOnce, StatementNames } from "./prepared.js";
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
  /**
   * Connections at most; default 20. Each turn being answered makes its statements one after
   * the other, so with fifty at once ten connections made every statement (a message's
   * record, which Slack's acknowledgement waits for, among them) queue behind the others':
   * twenty halved the acknowledgement's p99 in the bench (commit 107e864). A bot's stores
   * hold 20 and 2 (`acknowledging`), its budgets 2: four replicas fit in PostgreSQL's default
   * 100.
   */
  max?: number | undefined;
  /**
   * Connections opened one after another as soon as the pool is open (after `first`), and left
   * idle for the first statements; default none. Each connection made costs a server process, a
   * login and what `onConnect` does: in a trace of the bench (one pair of runs), a fresh bot
   * that made them during its first burst of questions had its event loop late 311 of the
   * burst's first 500 ms, 126 with ten made ahead. More are still made as statements need them
   * (growAhead), up to `max`.
   */
  warm?: number | undefined;
  /**
   * Connections of a pool of their own for the statements Slack's acknowledgement waits for
   * (SqlDatabase.acknowledging), all opened at once; default none (they go with the rest).
   */
  acknowledging?: number | undefined;
  /** A connection failed (the server went away, the connection was ended): for the log. */
  onIdleError?: ((error: Error) => void) | undefined;
  /**
   * Run on each new connection before its first statement; a rejection refuses the
   * connection, and the statement that wanted it fails with that error (replica-lock.ts).
   */
  onConnect?: ((query: ConnectionQuery) => Promise<void>) | undefined;
  /** Started at once, on a connection of the pool; every statement waits for it (migrations). */
  first?: ((pool: pg.Pool) => Promise<void>) | undefined;
}

/** One statement on the connection being opened. */
export type ConnectionQuery = (
  sql: string,
  params: readonly unknown[],
) => Promise<Record<string, unknown>[]>;

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
 * `statementTimeoutMs`, and a query with no answer fails after `callTimeoutMs`. With
 * `acknowledging`, a second pool of that many connections serves SqlDatabase.acknowledging.
 */
export function postgresDatabase(
  url: string,
  options: PostgresPoolOptions = {},
): SqlDatabase & { opened: Promise<void>; close(): Promise<void> } {
  const max = options.max ?? 20;
  const made = connections(url, options, max);
  const { pool } = made;
  const opened = options.first ? options.first(pool) : Promise.resolve();
  // Its failure is every statement's (and the opener's, who awaits `opened`), never unhandled.
  opened.catch(() => undefined);
  const layerOf = (connected: Connections, warm: number, most: number): QueryLayer => ({
    ...connected,
    db: queryLayer(connected.pool, opened),
    warm,
    max: most,
  });
  const main = layerOf(made, options.warm ?? 0, max);
  const ack = options.acknowledging ?? 0;
  // Its few connections all opened at once: an acknowledgement never waits for one to be made.
  const acknowledging = ack > 0 ? layerOf(connections(url, options, ack), ack, ack) : undefined;
  const layers = acknowledging ? [main, acknowledging] : [main];
  // From the first statement on: what `first` does takes a connection of its own.
  void opened.then(
    () =>
      Promise.all(
        layers.map(async (each) => {
          // Those warmed first: each taken while it is made would make one more (growAhead).
          await warmUp(each.pool, Math.min(each.warm, each.max));
          growAhead(each.pool, each.max);
        }),
      ),
    () => undefined,
  );
  return {
    opened,
    /** Once what `first` does has ended: the query layers and every connection closed. */
    close: async () => {
      await opened.catch(() => undefined);
      for (const each of layers) {
        await each.db.destroy();
        // The query layer ends the pool only if it ever used it.
        if (!each.pool.ended) await each.pool.end();
        // The pool is over before its idle connections are: what they hold (the replica
        // lock) is let go only once they have closed.
        await each.ended();
      }
    },
    db: main.db,
    ...(acknowledging && { acknowledging: acknowledging.db }),
    arrival: "seq",
    unfinishedByPerson: sql.raw("turns"),
    writesInWith: true,
    afterPurge: async () => undefined,
  };
}

interface QueryLayer extends Connections {
  db: Kysely<Schema>;
  /** Connections opened as soon as the pool is open (PostgresPoolOptions.warm). */
  warm: number;
  max: number;
}

/**
 * How long a close waits for the server to close the connections it was asked to, ms: a
 * server that does not answer (a stall) does not hold a shutdown up; its connections are then
 * left to its own time limits.
 */
const CLOSE_WAIT_MS = 2_000;

interface Connections {
  pool: pg.Pool;
  /**
   * Settles once the server has closed every connection the pool made (it does once the
   * connection's server process has ended, letting go of what it held), or CLOSE_WAIT_MS on.
   */
  ended(): Promise<void>;
}

/** Up to `max` connections to `url`, each set up as PostgresPoolOptions say. */
function connections(url: string, options: PostgresPoolOptions, max: number): Connections {
  const statementTimeoutMs = options.statementTimeoutMs ?? 5_000;
  const { onConnect } = options;
  const pool = new pg.Pool({
    connectionString: url,
    application_name: "slack-assistant-bridge",
    max,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    query_timeout: options.callTimeoutMs ?? 10_000,
    statement_timeout: statementTimeoutMs,
    lock_timeout: statementTimeoutMs,
    // A transaction idle that long belongs to a stuck caller: its row locks are let go.
    idle_in_transaction_session_timeout: 6 * statementTimeoutMs,
    keepAlive: true,
    // Kept open while idle: each holds what onConnect took (a replica's shared lock).
    idleTimeoutMillis: 0,
    types,
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
    // Run on each new connection before anything has it; a rejection ends the connection, and
    // whoever asked for it gets the error.
    ...(onConnect && {
      onConnect: (client: pg.ClientBase) =>
        onConnect(async (text, params) => (await client.query(text, [...params])).rows),
    }),
  });
  // A connection that breaks must not end the process ('error' unheard would). The pool hears
  // an idle one's; one in use tells its statement, and then its own 'error', heard here.
  pool.on("error", (error) => options.onIdleError?.(error));
  // Each connection prepares a statement the first time it sends it (prepared.ts).
  const names = new StatementNames();
  const open = new Set<pg.ClientBase>();
  pool.on("connect", (client) => {
    client.on("error", (error) => options.onIdleError?.(error));
    prepareOnce(client, names);
    open.add(client);
    client.once("end", () => open.delete(client));
  });
  const ended = async () => {
    const closing = [...open].map((client) => new Promise((end) => client.once("end", end)));
    let timer: NodeJS.Timeout | undefined;
    const given = new Promise((up) => {
      timer = setTimeout(up, CLOSE_WAIT_MS);
      timer.unref();
    });
    await Promise.race([Promise.all(closing), given]);
    clearTimeout(timer);
  };
  return { pool, ended };
}

/** The query layer over `pool`, whose statements wait for `opened` (the migrations). */
function queryLayer(pool: pg.Pool, opened: Promise<void>): Kysely<Schema> {
  const dialect = new PostgresDialect({
    pool: async () => {
      await opened;
      return pool;
    },
  });
  return new Kysely<Schema>({ dialect });
}

/**
 * Opens `count` connections, one after another, each held until all are open (a connection let
 * go would be handed out again), then leaves them idle. A failure (the server out of reach, the
 * pool ending) leaves the rest to the statements that need them, which report it.
 */
async function warmUp(pool: pg.Pool, count: number): Promise<void> {
  const held: pg.PoolClient[] = [];
  try {
    while (held.length < count && !pool.ending) held.push(await pool.connect());
  } catch {
    // Told by the next statement instead.
  } finally {
    for (const client of held) client.release();
  }
}

/**
 * Opens the pool's next connection before a statement needs it: whenever one is taken and
 * none is left idle, one more is opened (and made ready, holding the replica lock like any
 * other) and left idle, up to `max`. A burst of questions then finds its connections open
 * instead of each waiting for one to be made (a round trip, a login and the lock: 15 to 40 ms
 * under load; in a trace of a freshly started bot, two of its four slowest acknowledgements
 * had waited for one). One is opened at a time; a failure leaves it to the next statement,
 * which reports it.
 */
function growAhead(pool: pg.Pool, max: number): void {
  let growing = false;
  pool.on("acquire", () => {
    if (growing || pool.ending || pool.idleCount > 0 || pool.totalCount >= max) return;
    growing = true;
    pool
      .connect()
      .then((client) => client.release())
      .catch(() => undefined)
      .finally(() => {
        growing = false;
      });
  });
}
