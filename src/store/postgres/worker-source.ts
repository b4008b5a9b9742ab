/**
 * The code of the thread that holds the PostgreSQL connection (sync-client.ts), as plain
 * JavaScript in a string, started with `new Worker(WORKER_SOURCE, { eval: true })`. A file of
 * its own would have to exist as JavaScript wherever the bot runs: under tsx and vitest, which
 * compile TypeScript in-process only for the thread that imports it, a worker pointed at a .ts
 * file does not load. A string loads the same under tsx, vitest and `node dist/`.
 *
 * It holds one `pg.Client`, connected on the first query and again on the first query after
 * the connection was lost; each new connection first runs the `onConnect` steps, and is
 * given up (the query fails, as any failed connect) when one fails or refuses. Each request
 * `{ sql, params, session? }` arrives on the port; the answer `{ rows, rowCount, session }` or
 * `{ error: { message, code } }` is posted back, then the shared flag is set and the waiting
 * thread woken. `session` counts connections: a
 * transaction's statements carry the one it began on, and are refused on any other (after a
 * reconnect they would run outside the transaction, each committed on its own).
 *
 * A request marked `posted` is not answered: nobody waits for it. Requests run one after the
 * other in the order they came, so a posted write runs before anything asked after it. A
 * posted write's failure rides on the next answer, as `late` (at most LATE_KEPT of them).
 *
 * BIGINT (int8) columns are read as numbers: they hold epoch ms, ids and counts, all far
 * below 2^53.
 */
export const WORKER_SOURCE = `
"use strict";
const { workerData } = require("node:worker_threads");
let pg;
let loadError;
try {
  pg = require(workerData.pgPath);
  pg.types.setTypeParser(20, (text) => Number(text));
} catch (error) {
  // Answered to every request, rather than a thread that dies while the caller waits.
  loadError = error;
}

const { port, config, onConnect } = workerData;
const flag = new Int32Array(workerData.flag);
let client;
let session = 0;

/** SQLSTATEs after which the server has closed the session: 08 connection exceptions, 57P
 * operator intervention (shutdown, terminated), 25P03 idle in a transaction too long. */
const SESSION_ENDING = /^(08|57P|25P03)/;

function answer(reply) {
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}

function forget(c) {
  if (client === c) client = undefined;
}

function reasonOf(error) {
  if (error && error.message) return error.message;
  // Node reports a refused connection to every address of a name as an AggregateError
  // without a message of its own.
  if (error && Array.isArray(error.errors) && error.errors.length > 0) {
    return error.errors.map((e) => (e && e.message) || String(e)).join("; ");
  }
  return String((error && error.code) || error);
}

async function connection() {
  if (client) return client;
  let c;
  try {
    c = new pg.Client(config);
    c.on("error", () => forget(c));
    c.on("end", () => forget(c));
    await c.connect();
    for (const step of onConnect) {
      const result = await c.query(step.sql, step.params.length > 0 ? step.params : undefined);
      const row = result.rows[0];
      if (step.refusal && !(row && Object.values(row)[0] === true)) throw new Error(step.refusal);
    }
  } catch (error) {
    if (c) c.end().catch(() => undefined);
    throw Object.assign(error instanceof Error ? error : new Error(String(error)), { phase: "connect" });
  }
  client = c;
  session += 1;
  return c;
}

async function run(request) {
  if (loadError) throw Object.assign(new Error("cannot load pg: " + reasonOf(loadError)), { phase: "load" });
  if (request.session !== undefined && (client === undefined || request.session !== session)) {
    const error = new Error("the connection to PostgreSQL was lost during the transaction");
    error.phase = "transaction";
    throw error;
  }
  const c = await connection();
  const params = request.params.length > 0 ? request.params : undefined;
  const result = await c.query(request.sql, params);
  // Several statements in one string (a migration) answer one result each: the last counts.
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  return { rows: (last && last.rows) || [], rowCount: (last && last.rowCount) || 0, session };
}

async function end() {
  const c = client;
  client = undefined;
  if (c) await c.end().catch(() => undefined);
}

const LATE_KEPT = 10;
let late = [];
let queue = Promise.resolve();

/** Answers a request that is waited for, with the failures of posted ones since the last. */
function reply(request, result) {
  if (request.posted) return;
  if (late.length > 0) result.late = late;
  late = [];
  answer(result);
}

function failed(request, failure) {
  if (!request.posted) return reply(request, { error: failure });
  if (late.length < LATE_KEPT) late.push(failure);
}

port.on("message", (request) => {
  queue = queue.then(() => handle(request));
});

async function handle(request) {
  if (request.end) {
    await end();
    reply(request, { rows: [], rowCount: 0, session });
    return;
  }
  try {
    reply(request, await run(request));
  } catch (error) {
    // A server's error (a constraint, a statement timeout, a syntax error) leaves the
    // connection as it was. One that ends the session (a FATAL: the server shutting down, the
    // backend terminated, a connection problem; told by its SQLSTATE, as the severity's word
    // may be translated) and anything not from the server (refused, reset, closed) leave it
    // gone or in doubt: the next query opens a new one, rather than finding out on a dying one.
    const fromServer = Boolean(error && error.severity);
    const phase = error && error.phase;
    const endsSession = !fromServer || SESSION_ENDING.test(String(error.code));
    if (endsSession && phase !== "transaction") await end();
    const prefix = fromServer || phase === "transaction" || phase === "load"
      ? ""
      : phase === "connect"
        ? "cannot connect to PostgreSQL: "
        : "lost the connection to PostgreSQL: ";
    failed(request, { message: prefix + reasonOf(error), code: error && error.code });
  }
}
`;
