/**
 * Replicas of the bot's budgets for a test: each its own connection (as each replica is its
 * own process) to one schema of the test's own, with the budgets shared there. Closed, and the
 * schema dropped, once the test has finished.
 */
import { onTestFinished } from "vitest";
import {
  type SharedBudgetOptions,
  type SharedBudgets,
  sharedBudgets,
} from "../../src/budgets/postgres/shared-budgets.js";
import { migratePostgres } from "../../src/store/postgres/migrations.js";
import { SyncPostgres } from "../../src/store/postgres/sync-client.js";
import { postgresUrl, testSchema } from "./postgres.js";

export interface Replica {
  db: SyncPostgres;
  budgets: SharedBudgets;
}

export function replicas(
  count: 3,
  options?: SharedBudgetOptions,
): Promise<[Replica, Replica, Replica]>;
export function replicas(count: 2, options?: SharedBudgetOptions): Promise<[Replica, Replica]>;
export function replicas(count: 1, options?: SharedBudgetOptions): Promise<[Replica]>;
export async function replicas(
  count: number,
  options: SharedBudgetOptions = {},
): Promise<Replica[]> {
  const schema = testSchema();
  // The bot's stores migrate the schema; here no store is opened.
  await migratePostgres(postgresUrl(), schema);
  return Array.from({ length: count }, () => {
    const db = new SyncPostgres(postgresUrl(), { schema });
    // Registered after the schema's drop, and run before it (last registered first).
    onTestFinished(() => db.close());
    return { db, budgets: sharedBudgets(db, options) };
  });
}

/** Once what `replica` posted (a release, a pause, a sweep) is in the database: its next statement follows it. */
export function written(replica: Replica): void {
  replica.db.ping();
}
