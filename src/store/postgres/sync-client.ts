import { createRequire } from "node:module";
import {
  MessageChannel,
  type MessagePort,
  receiveMessageOnPort,
  Worker,
} from "node:worker_threads";
import { PostgresError, redact } from "./errors.js";
import { WORKER_SOURCE } from "./worker-source.js";

/**
 * PostgreSQL, one statement at a time, synchronously.
 *
 * Why synchronous: the store interfaces (store/stores.ts) are, because better-sqlite3 is, and
 * the core's crash safety rests on it: a record is written before the next statement of the
 * core runs (a question is on the disk before Slack is told it arrived, a run start is
 * recorded before it is sent). Making every store async would reorder nothing by itself but
 * would let other work interleave between a decision and its record everywhere in the core.
 * So PostgreSQL is made to answer synchronously instead.
 *
 * How: a worker thread (worker-source.ts) holds one `pg.Client` connection. A call posts
 * `{ sql, params }` on a MessagePort, then blocks on `Atomics.wait` over a SharedArrayBuffer
 * until the worker has posted the answer and set the flag; the answer is then read with
 * `receiveMessageOnPort`, still synchronously. Each call is one round trip to the server
 * while this thread's event loop waits: on the same network that is well under a
 * millisecond (bench/pg-store.ts measures it), about what an fsynced SQLite commit costs.
 * One connection per process, and nothing interleaves: a transaction's statements all run
 * while this thread is blocked in it. A write nobody needs to wait for is posted instead
 * (`post`): sent in order on the same connection, and not waited for.
 *
 * Nothing waits for ever: a call fails after `callTimeoutMs`, and the server cancels a
 * statement (or a lock wait) after `statementTimeoutMs`. A call that fails because the
 * connection is lost or does not answer throws; the next call opens a new connection (a
 * call that timed out replaces the worker itself, whatever it was stuck on). Errors never
 * carry the URL.
 */
export interface SyncPostgresOptions {
  /**
   * The schema every statement runs in (`search_path`), for tests and for several bots on one
   * database; lowercase letters, digits and `_`. Default: the server's (usually `public`).
   */
  schema?: string;
  /** How long a call waits for its answer before it fails, ms; default 10_000. */
  callTimeoutMs?: number;
  /** The server's `statement_timeout` and `lock_timeout` on this connection, ms; default 5_000. */
  statementTimeoutMs?: number;
  /** How long opening a connection may take, ms; default 5_000. */
  connectTimeoutMs?: number;
  /** A write sent with `post` failed: told when the next call is answered. Default: nothing. */
  onLateError?: (error: PostgresError) => void;
  /**
   * Statements every new connection runs before anything else (the first, and each one
   * opened after a connection was lost): a store connection's replica lock (replica-lock.ts).
   */
  onConnect?: readonly ConnectStep[];
}

/**
 * A statement a new connection runs first. With `refusal`, it answers one row whose first
 * column must be true: otherwise the connection is refused, with that sentence.
 */
export interface ConnectStep {
  sql: string;
  params: readonly unknown[];
  refusal?: string;
}

export interface QueryResult<R> {
  rows: R[];
  /** Rows the statement inserted, updated, deleted or returned. */
  rowCount: number;
}

interface Failure {
  message: string;
  code?: string;
}

interface Reply {
  rows?: Record<string, unknown>[];
  rowCount?: number;
  session?: number;
  error?: Failure;
  /** Posted writes that failed since the last answer. */
  late?: Failure[];
}

interface Thread {
  worker: Worker;
  port: MessagePort;
  flag: Int32Array;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** How long `close` lets the worker say goodbye to the server, ms. */
const CLOSE_WAIT_MS = 2_000;

export class SyncPostgres {
  readonly schema: string | undefined;
  private readonly callTimeoutMs: number;
  private readonly config: Record<string, unknown>;
  private thread: Thread | undefined;
  /** The connection the open transaction runs on; undefined outside a transaction. */
  private session: number | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly options: SyncPostgresOptions = {},
  ) {
    if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
      throw new PostgresError(
        `the schema name "${options.schema}" is not one this bot uses: lowercase letters, digits and _, at most 63`,
      );
    }
    this.schema = options.schema;
    this.callTimeoutMs = options.callTimeoutMs ?? 10_000;
    const statementTimeoutMs = options.statementTimeoutMs ?? 5_000;
    this.config = {
      connectionString: url,
      application_name: "slack-assistant-bridge",
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      statement_timeout: statementTimeoutMs,
      lock_timeout: statementTimeoutMs,
      // A transaction is open only while this thread runs it: one idle that long belongs to a
      // frozen process, and should not hold its row locks for ever.
      idle_in_transaction_session_timeout: 6 * statementTimeoutMs,
      keepAlive: true,
      ...(this.schema === undefined ? {} : { options: `-c search_path=${this.schema}` }),
    };
  }

  query<R = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): QueryResult<R> {
    const reply = this.call({ sql, params: [...params], session: this.session });
    return { rows: (reply.rows ?? []) as R[], rowCount: reply.rowCount ?? 0 };
  }

  rows<R>(sql: string, params: readonly unknown[] = []): R[] {
    return this.query<R>(sql, params).rows;
  }

  first<R>(sql: string, params: readonly unknown[] = []): R | undefined {
    return this.query<R>(sql, params).rows[0];
  }

  /** How many rows the statement changed. */
  run(sql: string, params: readonly unknown[] = []): number {
    return this.query(sql, params).rowCount;
  }

  /**
   * Sends a write without waiting for it: it runs on this connection after everything sent
   * before it and before everything asked after it, so a later read sees it. Nothing is
   * known of its outcome here; a failure is told to `onLateError` once a later call is
   * answered. For writes whose loss costs a little and whose wait would cost every time (a
   * budget slot released: lost, it counts until its lease ends). Dropped once closed.
   */
  post(sql: string, params: readonly unknown[] = []): void {
    if (this.closed) return;
    this.started().port.postMessage({
      sql,
      params: [...params],
      session: this.session,
      posted: true,
    });
  }

  /**
   * Runs `fn` (which makes more calls on this client) in one transaction: committed when it
   * returns, rolled back when it throws (and the error rethrown). Inside a transaction, a
   * nested one is part of it.
   */
  transaction<T>(fn: () => T): T {
    if (this.session !== undefined) return fn();
    this.session = this.call({ sql: "BEGIN", params: [] }).session;
    try {
      const result = fn();
      this.query("COMMIT");
      return result;
    } catch (error) {
      this.rollback();
      throw error;
    } finally {
      this.session = undefined;
    }
  }

  /**
   * As `transaction`, for a `fn` that awaits: every call made until it settles, from
   * anywhere in the process, runs in the transaction. Only for what runs alone (rotate-key).
   */
  async transactionOf<T>(fn: () => Promise<T>): Promise<T> {
    if (this.session !== undefined) return fn();
    this.session = this.call({ sql: "BEGIN", params: [] }).session;
    try {
      const result = await fn();
      this.query("COMMIT");
      return result;
    } catch (error) {
      this.rollback();
      throw error;
    } finally {
      this.session = undefined;
    }
  }

  /** Whether the server answers (opening a new connection if the last one was lost). */
  ping(): boolean {
    try {
      return this.first<{ ok: number }>("SELECT 1 AS ok")?.ok === 1;
    } catch {
      return false;
    }
  }

  /** Ends the connection and the worker; the process can exit afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const thread = this.thread;
    this.thread = undefined;
    if (!thread) return;
    this.exchange(thread, { end: true }, CLOSE_WAIT_MS);
    this.stop(thread);
  }

  private rollback(): void {
    try {
      this.query("ROLLBACK");
    } catch {
      // The connection is gone, and the server rolled the transaction back with it.
    }
  }

  private call(request: { sql: string; params: unknown[]; session?: number | undefined }): Reply {
    if (this.closed) throw new PostgresError("the PostgreSQL connection is closed");
    const thread = this.started();
    const reply = this.exchange(thread, request, this.callTimeoutMs);
    if (reply === undefined) {
      // Stuck (a server that stopped answering, a network gone): replaced, whatever it was on.
      this.thread = undefined;
      this.stop(thread);
      throw new PostgresError(
        `PostgreSQL did not answer within ${this.callTimeoutMs} ms; the next call opens a new connection`,
        "ETIMEDOUT",
      );
    }
    for (const failure of reply.late ?? []) this.options.onLateError?.(this.failureOf(failure));
    if (reply.error) throw this.failureOf(reply.error);
    if (reply.rows) for (const row of reply.rows) revive(row);
    return reply;
  }

  private failureOf(failure: Failure): PostgresError {
    return new PostgresError(redact(failure.message, this.url), failure.code);
  }

  /** Posts `request` and blocks until the answer; undefined if none came within `timeoutMs`. */
  private exchange(thread: Thread, request: object, timeoutMs: number): Reply | undefined {
    Atomics.store(thread.flag, 0, 0);
    thread.port.postMessage(request);
    Atomics.wait(thread.flag, 0, 0, timeoutMs);
    return receiveMessageOnPort(thread.port)?.message as Reply | undefined;
  }

  private started(): Thread {
    if (this.thread) return this.thread;
    const flag = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const { port1, port2 } = new MessageChannel();
    const pgPath = createRequire(import.meta.url).resolve("pg");
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        pgPath,
        port: port2,
        flag: flag.buffer,
        config: this.config,
        onConnect: this.options.onConnect ?? [],
      },
      transferList: [port2],
    });
    // Its failures reach the caller as answers or timeouts; an unheard 'error' would end the process.
    worker.on("error", () => undefined);
    // A store left open must not keep the process alive.
    worker.unref();
    this.thread = { worker, port: port1, flag };
    return this.thread;
  }

  private stop(thread: Thread): void {
    thread.port.close();
    void thread.worker.terminate();
  }
}

/** BYTEA values arrive from the worker as Uint8Array (structured clone drops Buffer's class). */
function revive(row: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(row)) {
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) {
      row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }
}
