/**
 * What only PostgreSQL has: replicas sharing one database (separate connections, in separate
 * processes, racing), its schema version, and a server that refuses, stalls or drops the
 * connection. What every store means is in the shared suites (stores.test.ts,
 * people-stores.test.ts).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CompiledQuery } from "kysely";
import pg from "pg";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { PostgresOpenError } from "../../src/store/postgres/errors.js";
import { MIGRATIONS } from "../../src/store/postgres/migrations.js";
import { openPostgresStores, type PostgresStores } from "../../src/store/postgres/open.js";
import { REPLICA_LOCK } from "../../src/store/postgres/replica-lock.js";
import { SqlLeaseStore } from "../../src/store/sql/leases.js";
import { type PostgresPoolOptions, postgresDatabase } from "../../src/store/sql/postgres-pool.js";
import { SqlTurnStore } from "../../src/store/sql/turns.js";
import type { Claim } from "../../src/store/stores.js";
import { IllegalTransition, type Turn } from "../../src/store/turn.js";
import { postgresStores, postgresUrl, testSchema } from "../support/postgres.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = pathToFileURL(createRequire(join(ROOT, "package.json")).resolve("tsx")).href;
const REPLICA = fileURLToPath(new URL("./postgres-replica.ts", import.meta.url));

/**
 * One process per command (postgres-replica.ts) on `schema`; once every one is ready, all are
 * told to start at the same moment, and what each printed is the result.
 */
async function replicas(schema: string, commands: string[][]): Promise<unknown[]> {
  const started = commands.map((command) => {
    const child = spawn(process.execPath, ["--import", TSX, REPLICA, schema, ...command], {
      env: { ...process.env, POSTGRES_REPLICA_URL: postgresUrl() },
    });
    onTestFinished(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    return { child, lines: linesOf(child) };
  });
  const ready = await Promise.all(started.map(({ lines }) => lines.next()));
  expect(ready).toEqual(commands.map(() => "ready"));
  const at = Date.now() + 100;
  for (const { child } of started) child.stdin.write(`${at}\n`);
  return Promise.all(started.map(({ lines }) => lines.next().then((line) => JSON.parse(line))));
}

/** The child's stdout a line at a time; rejects, with its stderr, if it ends first. */
function linesOf(child: ChildProcessWithoutNullStreams): { next(): Promise<string> } {
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const iterator = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    next: async () => {
      const { value, done } = await iterator.next();
      if (done) throw new Error(`the replica ended early: ${stderr}`);
      return value;
    },
  };
}

/** A pool of the test's own, closed when the test has finished; `query` answers rows. */
function pool(url: string, options: PostgresPoolOptions = {}) {
  const database = postgresDatabase(url, options);
  onTestFinished(() => database.close());
  return {
    query: async <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
      (await database.db.executeQuery(CompiledQuery.raw(text, params))).rows as T[],
  };
}

/** A schema of the test's own holding `t`, one int column `a` and one row (1); `admin` outside it. */
async function tableOfOneRow() {
  const schema = testSchema();
  const admin = pool(postgresUrl());
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.t (a int)`);
  await admin.query(`INSERT INTO ${schema}.t VALUES (1)`);
  return { schema, admin };
}

/** A port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = await listening(createServer());
  const port = portOf(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A server that accepts connections and never says a word. */
async function silentServer(): Promise<number> {
  const server = await listening(createServer(() => undefined));
  onTestFinished(() => {
    server.close();
    server.unref();
  });
  return portOf(server);
}

function listening(server: Server): Promise<Server> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function portOf(server: Server): number {
  return (server.address() as { port: number }).port;
}

/** Opens the stores (their schema migrated), then closes them. */
async function opened(stores: PostgresStores): Promise<void> {
  try {
    await stores.opened;
  } finally {
    await stores.close();
  }
}

/** Why the stores could not be opened; they are closed. */
async function openFailure(stores: PostgresStores): Promise<unknown> {
  try {
    await stores.opened;
  } catch (error) {
    return error;
  } finally {
    await stores.close();
  }
  throw new Error("expected the open to fail");
}

/** How long `fn`'s promise took to fail, ms, and why. */
async function failure(fn: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await fn();
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error("expected a failure");
}

describe("the PostgreSQL stores", () => {
  it("are migrated once when several replicas open a new schema at the same moment", async () => {
    const schema = testSchema();
    const results = await replicas(schema, [["open"], ["open"], ["open"], ["open"]]);
    expect(results).toEqual(commandsOf(4, { opened: true }));
    const db = pool(postgresUrl(), { schema });
    expect(await db.query("SELECT version FROM schema_version ORDER BY version")).toEqual(
      MIGRATIONS.map((_, i) => ({ version: i + 1 })),
    );
    const tables = await db.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1
       ORDER BY table_name`,
      [schema],
    );
    expect(tables.map((t) => t.name)).toEqual([
      "assistant_choices",
      "budget_buckets",
      "budget_pauses",
      "budget_slots",
      "budget_waiters",
      "conversation_leases",
      "conversations",
      "feedback",
      "installations",
      "linked_tokens",
      "schema_version",
      "settings",
      "turns",
      "workspace_orgs",
    ]);
  });

  it("give a conversation's lease to exactly one of two replicas claiming it at once", async () => {
    const schema = testSchema();
    const stores = openPostgresStores(postgresUrl(), Date.now, { schema });
    onTestFinished(async () => await stores.close());
    const ids: number[] = [];
    for (let i = 0; i < 100; i++) {
      const key = { team: "T", channel: "C", threadTs: `${i}.1` };
      ids.push((await stores.conversations.ensure(key, "a")).id);
    }
    const [first, second] = (await replicas(schema, [
      ["claim", "r1", ...ids.map(String)],
      ["claim", "r2", ...ids.map(String)],
    ])) as [Claim[], Claim[]];
    const outcomes = ids.map((_, i) => [first[i], second[i]].sort());
    expect(outcomes).toEqual(ids.map(() => ["claimed", "refused"]));
    // The table says the same as the answers.
    expect(await stores.leases.heldBy("r1")).toBe(first.filter((c) => c === "claimed").length);
    expect(await stores.leases.heldBy("r2")).toBe(second.filter((c) => c === "claimed").length);
  });

  it("write a turn from the version last written, and still see what another replica wrote since", async () => {
    const schema = testSchema();
    const [mine, theirs] = [1, 2].map(() => {
      const stores = openPostgresStores(postgresUrl(), Date.now, { schema });
      onTestFinished(async () => await stores.close());
      return stores;
    }) as [PostgresStores, PostgresStores];
    const key = { team: "T", channel: "C", threadTs: "1.1" };
    const conversation = await mine.conversations.ensure(key, "asst");
    const fields = { conversation, assistant: "asst", ...key, user: "U1", notes: [] };
    const turn = (await mine.turns.record({ ...fields, messageTs: "1.1", content: "q" }))
      .turn as Turn;
    await mine.turns.recordContent(turn.id, {
      serviceContent: "q",
      contextThroughTs: null,
      notes: [],
    });
    // A stop asked through the other replica shows in this one's next transition.
    expect(await theirs.turns.requestStop(turn.id, "U1")).toBe(true);
    expect(await mine.turns.recordPostAttempt(turn.id)).toMatchObject({
      state: "posting",
      stopRequestedBy: "U1",
    });
    // The other replica moves the turn on: this one's next write starts from the row.
    await theirs.turns.recordMessage(turn.id, "msg-1");
    await expect(mine.turns.recordMessage(turn.id, "msg-2")).rejects.toThrow(IllegalTransition);
    expect(await mine.turns.recordRunAttempt(turn.id, {})).toMatchObject({
      state: "run_starting",
      serviceMessageId: "msg-1",
    });
    expect(await theirs.turns.byId(turn.id)).toMatchObject({ state: "run_starting" });
  });

  it("record a question that starts a thread, with its conversation, in one statement", async () => {
    const { stores, counted, statements } = await countingStatements();
    const turns = new SqlTurnStore(counted);
    const ask = { assistant: "asst", limit: 1, user: "U1", content: "q", notes: [] };
    const key = { team: "T", channel: "C", threadTs: "1.1", messageTs: "1.1" };
    const first = await turns.record({ ...key, ...ask });
    expect(statements()).toBe(1);
    // A second question of the thread's asker, past the limit: refused by the same statement.
    const second = await turns.record({ ...key, messageTs: "1.2", ...ask });
    expect(statements()).toBe(2);
    expect(second).toMatchObject({ conversation: first.conversation, overLimit: true });
    expect(await stores.turns.byId(second.turn?.id ?? "")).toMatchObject({
      state: "finished",
      content: "",
    });
    expect(await stores.conversations.find(key)).toEqual(first.conversation);
  });

  it("record a question, and count a person's waiting ones, while every turn's connection is busy", async () => {
    const schema = testSchema();
    const stores = openPostgresStores(postgresUrl(), Date.now, { schema });
    onTestFinished(async () => await stores.close());
    await stores.opened;
    const queries = postgresDatabase(postgresUrl(), { schema, max: 1, acknowledging: 1 });
    onTestFinished(async () => await queries.close());
    const turns = new SqlTurnStore(queries);
    // The turns' one connection held, as a burst of answers holds them all (from the moment
    // it is taken: the record must not run before).
    let letGo: () => void = () => undefined;
    let taken: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => (taken = resolve));
    const held = queries.db.connection().execute(
      () =>
        new Promise<void>((resolve) => {
          letGo = resolve;
          taken();
        }),
    );
    await holding;
    const ask = { assistant: "asst", user: "U1", content: "q", notes: [] };
    const recorded = await turns.record({
      team: "T",
      channel: "C",
      threadTs: "1.1",
      messageTs: "1.1",
      ...ask,
    });
    expect(recorded.turn?.state).toBe("received");
    expect(await turns.unfinishedCountBy("T", "U1")).toBe(1);
    // The turn's own steps wait for the turns' connection.
    const read = turns.byId(recorded.turn?.id ?? "");
    letGo();
    await held;
    expect(await read).toMatchObject({ state: "received", content: "q" });
  });

  it("claim a conversation, and read it with its unfinished turns, in one statement", async () => {
    const { stores, counted, statements } = await countingStatements();
    const ask = { assistant: "asst", user: "U1", content: "q", notes: [] };
    const key = { team: "T", channel: "C", threadTs: "1.1" };
    const { conversation, turn } = await stores.turns.record({ ...key, messageTs: "1.1", ...ask });
    const leases = new SqlLeaseStore(counted);
    const read = await leases.claimReading(conversation.id, "r1", 60_000);
    expect(statements()).toBe(1);
    expect(read).toEqual({ claim: "claimed", conversation, unfinished: [turn] });
    // The claim is written: another holder is refused, by the same one statement.
    expect(await leases.claimReading(conversation.id, "r2", 60_000)).toMatchObject({
      claim: "refused",
    });
    expect(statements()).toBe(2);
  });

  it("give a lease back, when nothing is left to run, in one statement; a claim meeting the delete takes it after", async () => {
    const { stores, counted, statements, schema } = await countingStatements();
    const ask = { assistant: "asst", user: "U1", content: "q", notes: [] };
    const key = { team: "T", channel: "C", threadTs: "1.1" };
    const { conversation, turn } = await stores.turns.record({ ...key, messageTs: "1.1", ...ask });
    const leases = new SqlLeaseStore(counted);
    await leases.claim(conversation.id, "r1", 60_000);
    await stores.turns.finish(turn?.id ?? "", { outcome: "completed" });
    const before = statements();
    expect(await leases.releaseIfDone(conversation.id, "r1")).toEqual([]);
    expect(statements() - before).toBe(1);
    // Another replica's claim that meets the lease while it is being deleted waits for the
    // delete, and then takes it: a turn it recorded after the look is not left unclaimed.
    await leases.claim(conversation.id, "r1", 60_000);
    const [client, watcher] = [1, 2].map(
      () => new pg.Client({ connectionString: postgresUrl(), options: `-c search_path=${schema}` }),
    ) as [pg.Client, pg.Client];
    for (const each of [client, watcher]) {
      await each.connect();
      onTestFinished(() => each.end());
    }
    const deleter = (await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
    await client.query("BEGIN");
    await client.query("DELETE FROM conversation_leases WHERE conversation_id = $1", [
      conversation.id,
    ]);
    expect(await blockedBy(watcher, deleter)).toBe(0);
    let answered = false;
    const claim = stores.leases.claim(conversation.id, "r2", 60_000).finally(() => {
      answered = true;
    });
    // Until the claim waits for the delete's lock (each look is a round trip; no timer), seen
    // from a connection of its own: within a transaction the server's activity view stays as
    // first read. A claim answered without waiting ends the looks, and fails below.
    while (!answered && (await blockedBy(watcher, deleter)) === 0) {}
    expect(await blockedBy(watcher, deleter)).toBe(1);
    await client.query("COMMIT");
    expect(await claim).toBe("claimed");
  });

  it("give a shared window's last slots to only as many of three replicas' takes as it has", async () => {
    const schema = testSchema();
    await opened(openPostgresStores(postgresUrl(), Date.now, { schema }));
    const got = (await replicas(schema, [
      ["occupy", "slack:T:chat.startStream", "150", "100"],
      ["occupy", "slack:T:chat.startStream", "150", "100"],
      ["occupy", "slack:T:chat.startStream", "150", "100"],
    ])) as number[];
    expect(got.reduce((a, b) => a + b, 0)).toBe(150);
  });

  it("refuse a schema newer than the code, naming both versions, and leave it as it is", async () => {
    const schema = testSchema();
    await opened(openPostgresStores(postgresUrl(), Date.now, { schema }));
    const db = pool(postgresUrl(), { schema });
    const known = MIGRATIONS.length;
    await db.query("INSERT INTO schema_version (version, applied_at) VALUES ($1, 0)", [known + 1]);
    const error = await openFailure(openPostgresStores(postgresUrl(), Date.now, { schema }));
    expect(error).toBeInstanceOf(PostgresOpenError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Cannot open the PostgreSQL database at [^ ]+ \\(schema ${schema}\\): its schema is version ${known + 1}, but this version of the bot knows versions up to ${known}: the database was written by a newer release of the bot\\.`,
      ),
    );
    expect(await db.query("SELECT version FROM schema_version ORDER BY version")).toHaveLength(
      known + 1,
    );
  });

  it("never put the URL or its password in an error", async () => {
    const secret = "pa55-w0rd-s3cret";
    const url = `postgres://bridge:${secret}@127.0.0.1:${await closedPort()}/bridge`;
    const error = await openFailure(openPostgresStores(url));
    expect(error).toBeInstanceOf(PostgresOpenError);
    const { message, stack } = error as Error;
    expect(message).toMatch(
      /^Cannot open the PostgreSQL database at 127\.0\.0\.1:\d+\/bridge: cannot connect to PostgreSQL: connect ECONNREFUSED/,
    );
    for (const text of [message, String(stack), String((error as Error).cause)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(url);
    }
    const unreadable = `postgres://bridge:${secret}@[::1/bridge`;
    const unread = await openFailure(openPostgresStores(unreadable));
    expect((unread as Error).message).toBe(
      "Cannot open the PostgreSQL database (its URL could not be read): cannot connect to PostgreSQL: Invalid URL",
    );
  });

  it("fail at once when the server refuses the connection, and ping false", async () => {
    const db = pool(`postgres://postgres@127.0.0.1:${await closedPort()}/postgres`);
    const { error, ms } = await failure(() => db.query("SELECT 1"));
    expect(error).toMatchObject({ code: "ECONNREFUSED" });
    expect(ms).toBeLessThan(2_000);
  });

  it("fail, rather than wait for ever, on a server that never answers", async () => {
    const url = `postgres://postgres@127.0.0.1:${await silentServer()}/postgres`;
    const connecting = await failure(() => pool(url, { connectTimeoutMs: 200 }).query("SELECT 1"));
    expect((connecting.error as Error).message).toMatch(/timeout/i);
    expect(connecting.ms).toBeLessThan(2_000);
    // A stalled server's ping says so within /readyz's two seconds.
    const stores = openPostgresStores(url, Date.now, { connectTimeoutMs: 200 });
    onTestFinished(async () => await stores.close());
    stores.opened.catch(() => undefined);
    const started = performance.now();
    expect(await stores.ping()).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("give up on a call with no answer, and cancel a statement that runs too long", async () => {
    const waiting = pool(postgresUrl(), { callTimeoutMs: 200 });
    const call = await failure(() => waiting.query("SELECT pg_sleep(5)"));
    expect((call.error as Error).message).toMatch(/timeout/i);
    const db = pool(postgresUrl(), { statementTimeoutMs: 100 });
    const statement = await failure(() => db.query("SELECT pg_sleep(5)"));
    expect(statement.error).toMatchObject({ code: "57014" });
    for (const { ms } of [call, statement]) expect(ms).toBeLessThan(2_000);
    expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });

  it("fail the statement whose connection is ended, keep the process, and open a new one", async () => {
    const lost: Error[] = [];
    const db = pool(postgresUrl(), { max: 1, onIdleError: (error) => lost.push(error) });
    const admin = pool(postgresUrl());
    const pid = async () => (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))[0];
    const before = await pid();
    // Ended by the server (a failover, an administrator) while a statement runs on it.
    const sleeping = db.query("SELECT pg_sleep(5)");
    sleeping.catch(() => undefined);
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(5)'",
    );
    await expect(sleeping).rejects.toThrow(/terminat/);
    // Told, not thrown: an 'error' nobody hears would end the process.
    await vi.waitFor(() => expect(lost.length).toBeGreaterThan(0));
    expect(await pid()).not.toEqual(before);
  });

  it("fail, without ending the process, a statement given a connection the server just ended", async () => {
    const lost: Error[] = [];
    const db = pool(postgresUrl(), { max: 1, onIdleError: (error) => lost.push(error) });
    const pid = async () => (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))[0];
    const before = await pid();
    await expect(db.query("SELECT pg_terminate_backend(pg_backend_pid())")).rejects.toThrow(
      "terminating connection due to administrator command",
    );
    // At once: the pool hands the same connection out before its end has been read. The
    // statement fails, and the connection's 'error' is heard (unheard, it ended the process).
    await expect(pid()).rejects.toThrow("Connection terminated unexpectedly");
    expect(lost.map((error) => error.message)).toContain("Connection terminated unexpectedly");
    expect(await pid()).not.toEqual(before);
  });

  it("open the next connection before a statement needs it, never more than the most", async () => {
    let connections = 0;
    const database = postgresDatabase(postgresUrl(), {
      max: 3,
      onConnect: async () => {
        connections++;
      },
    });
    onTestFinished(() => database.close());
    const { db } = database;
    // Each held until let go: while it is, its connection is in use.
    let letGo: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const hold = () => db.connection().execute(() => released);
    const first = hold();
    // The one in use left none idle: the next is opened and waits, idle.
    await vi.waitFor(() => expect(connections).toBe(2));
    const second = hold();
    await vi.waitFor(() => expect(connections).toBe(3));
    const third = hold();
    // All three in use, and three the most: the fourth waits its turn, and none more is opened.
    const fourth = db.executeQuery(CompiledQuery.raw("SELECT 4 AS n"));
    letGo();
    await Promise.all([first, second, third]);
    expect((await fourth).rows).toEqual([{ n: 4 }]);
    expect(connections).toBe(3);
  });

  it("open as many connections as asked as soon as it opens, and leave them for the statements", async () => {
    let connections = 0;
    const database = postgresDatabase(postgresUrl(), {
      max: 5,
      warm: 3,
      onConnect: async () => {
        connections++;
      },
    });
    onTestFinished(() => database.close());
    await database.opened;
    // No statement yet: three made, one after another.
    await vi.waitFor(() => expect(connections).toBe(3));
    // Two statements at once find them open, and one still idle: none more is made. (With all
    // three in use at once, growing ahead would open a fourth, as the test above shows.)
    const { db } = database;
    const answers = await Promise.all(
      [1, 2].map((n) => db.executeQuery(CompiledQuery.raw(`SELECT ${n} AS n`))),
    );
    expect(answers.map((a) => a.rows)).toEqual([[{ n: 1 }], [{ n: 2 }]]);
    expect(connections).toBe(3);
  });

  it("close a connection its first statement refused, fail that statement, and end all the same", async () => {
    let refusals = 1;
    const database = postgresDatabase(postgresUrl(), {
      max: 1,
      onConnect: async () => {
        if (refusals-- > 0) throw new Error("the replica lock is taken");
      },
    });
    const { db } = database;
    await expect(db.executeQuery(CompiledQuery.raw("SELECT 1 AS n"))).rejects.toThrow(
      "the replica lock is taken",
    );
    // The one connection there may be was given back: the next statement gets one.
    expect((await db.executeQuery(CompiledQuery.raw("SELECT 2 AS n"))).rows).toEqual([{ n: 2 }]);
    await database.close();
  });

  it("parse each statement once per connection, and only execute it after that", async () => {
    const db = pool(postgresUrl(), { max: 1 });
    const text = "SELECT $1::int + 1 AS n";
    for (const n of [1, 2, 3]) expect(await db.query(text, [n])).toEqual([{ n: n + 1 }]);
    // The one connection holds it prepared, planned for the three.
    const prepared = await db.query(
      "SELECT generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE statement = $1",
      [text],
    );
    expect(prepared).toEqual([{ runs: 3 }]);
  });

  it("read a table given a column under a prepared `*`, as the table is now", async () => {
    const { schema, admin } = await tableOfOneRow();
    const db = pool(postgresUrl(), { schema, max: 1 });
    const read = () => db.query("SELECT * FROM t WHERE a = $1", [1]);
    expect(await read()).toEqual([{ a: 1 }]);
    // A newer replica's migration, while this one runs.
    await admin.query(`ALTER TABLE ${schema}.t ADD COLUMN b int DEFAULT 2`);
    expect(await read()).toEqual([{ a: 1, b: 2 }]);
    expect(await read()).toEqual([{ a: 1, b: 2 }]);
  });

  it("fail a transaction whose prepared `*` met a changed table, and read it as it is in the next", async () => {
    const { schema, admin } = await tableOfOneRow();
    const database = postgresDatabase(postgresUrl(), { schema, max: 1 });
    onTestFinished(() => database.close());
    const read = () =>
      database.db
        .transaction()
        .execute(
          async (trx) => (await trx.executeQuery(CompiledQuery.raw("SELECT * FROM t"))).rows,
        );
    expect(await read()).toEqual([{ a: 1 }]);
    await admin.query(`ALTER TABLE ${schema}.t ADD COLUMN b int DEFAULT 2`);
    // Refused inside the transaction, which the refusal ended: not sent again there.
    await expect(read()).rejects.toThrow("must not change result type");
    expect(await read()).toEqual([{ a: 1, b: 2 }]);
  });

  it("let go of the replica lock on every connection by the time they are closed", async () => {
    const schema = testSchema();
    const admin = pool(postgresUrl());
    const stores = openPostgresStores(postgresUrl(), Date.now, { schema });
    await stores.opened;
    const holders = async () =>
      (
        await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'advisory' AND classid = $1 AND objid = hashtext($2)::oid`,
          [REPLICA_LOCK, schema],
        )
      )[0]?.n;
    // The warmed connections and the acknowledgements' all hold it.
    await vi.waitFor(async () => expect(await holders()).toBe(12));
    await stores.close();
    expect(await holders()).toBe(0);
  });

  it("read and write bytes and big numbers as the other stores do", async () => {
    const stores = postgresStores(() => 1_767_225_600_123);
    const sealed = Buffer.from([0, 255, 1, 254]);
    expect(await stores.linkedTokens.put("T", "U", sealed)).toEqual({
      team: "T",
      user: "U",
      sealed,
      linkedAt: 1_767_225_600_123,
    });
    expect(Buffer.isBuffer((await stores.linkedTokens.get("T", "U"))?.sealed)).toBe(true);
    expect(await stores.ping()).toBe(true);
    await stores.close();
    expect(await stores.ping()).toBe(false);
  });
});

function commandsOf<T>(count: number, value: T): T[] {
  return Array.from({ length: count }, () => value);
}

/**
 * The stores on a schema of their own, and the query layer of the same database, counting the
 * statements it sends. Counted as they are answered: a query written into another (a read in a
 * claim's statement) is not one of its own.
 */
async function countingStatements() {
  const schema = testSchema();
  const stores = openPostgresStores(postgresUrl(), Date.now, { schema });
  onTestFinished(async () => await stores.close());
  await stores.opened;
  const queries = postgresDatabase(postgresUrl(), { schema });
  onTestFinished(async () => await queries.close());
  let statements = 0;
  const db = queries.db.withPlugin({
    transformQuery: ({ node }) => node,
    transformResult: async ({ result }) => {
      statements += 1;
      return result;
    },
  });
  return { stores, counted: { ...queries, db }, statements: () => statements, schema };
}

/** How many statements wait for a lock the server process `pid` holds, as `watcher` sees now. */
async function blockedBy(watcher: pg.Client, pid: number): Promise<number> {
  const { rows } = await watcher.query(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
    [pid],
  );
  return rows[0].n;
}
