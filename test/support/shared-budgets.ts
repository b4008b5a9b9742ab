/**
 * Replicas of the bot's budgets for a test: each its own pool of connections (as each replica
 * is its own process) to one schema of the test's own, with the budgets shared there. Closed,
 * and the schema dropped, once the test has finished.
 *
 * A shared budget's take lands one round trip after it is asked for (budgets/postgres/
 * ahead.ts): `take` and `readyAt` here ask as the scheduler does, then wait for the answer.
 */
import { CompiledQuery } from "kysely";
import { onTestFinished } from "vitest";
import type { Allowance, QueuePlace } from "../../src/budgets/allowance.js";
import {
  type SharedBudgetOptions,
  type SharedBudgets,
  sharedBudgets,
} from "../../src/budgets/postgres/shared-budgets.js";
import { migratePostgres } from "../../src/store/postgres/migrations.js";
import { postgresDatabase } from "../../src/store/sql/postgres-pool.js";
import { postgresUrl, testSchema } from "./postgres.js";

export type Query = <T = Record<string, unknown>>(
  text: string,
  params?: readonly unknown[],
) => Promise<T[]>;

export interface Replica {
  /** A statement on this replica's connections, for what the test reads or breaks itself. */
  query: Query;
  budgets: SharedBudgets;
  /** This replica's statements on their way. */
  onTheirWay(): Promise<unknown>[];
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
    const database = postgresDatabase(postgresUrl(), { schema, max: 2 });
    const onTheirWay = new Set<Promise<unknown>>();
    const query: Query = (text, params = []) => {
      const statement = database.db
        .executeQuery(CompiledQuery.raw(text, [...params]))
        .then((result) => result.rows as never[]);
      onTheirWay.add(statement);
      const landed = () => onTheirWay.delete(statement);
      statement.then(landed, landed);
      return statement;
    };
    const budgets = sharedBudgets(query, options);
    // Registered after the schema's drop, and run before it (last registered first).
    onTestFinished(async () => {
      await budgets.settled();
      await database.close();
    });
    return { query, budgets, onTheirWay: () => [...onTheirWay] };
  });
}

/**
 * Once nothing the replicas sent is on its way (a take, a release, a pause, a sweep), nor what
 * their answers set off, in any of them: one replica's answer can set off another's statement
 * (a token freed, a pause seen) after that one has settled, so they are looked at again until
 * none has anything on its way.
 */
export async function written(...sharing: Replica[]): Promise<void> {
  for (;;) {
    await Promise.all(sharing.map((replica) => replica.budgets.settled()));
    // A statement of the test's own, or one that another's answer set off meanwhile.
    const left = sharing.flatMap((replica) => replica.onTheirWay());
    if (left.length === 0) return;
    await Promise.allSettled(left);
    // What their answers set off runs before the next look.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Once what a shared budget asked of the database (a take, a reading) has landed. */
export async function settled(budget: unknown): Promise<void> {
  await (budget as { settled?: () => Promise<void> }).settled?.();
}

/**
 * A take as the scheduler makes one: asked for, then taken from the hand once it lands. What
 * spending it wrote (a window's slot counts a window from its call) lands before the next look,
 * as a call's round trip passes first in real time.
 */
export async function take(allowance: Allowance, now: number, place?: QueuePlace) {
  const took =
    allowance.tryTake(now, place) ||
    (await settled(allowance).then(() => allowance.tryTake(now, place)));
  await settled(allowance);
  return took;
}

/** readyAt once what it asked to read has landed. */
export async function readyAt(allowance: Allowance, now: number, ahead = 0): Promise<number> {
  allowance.readyAt(now, ahead);
  await settled(allowance);
  return allowance.readyAt(now, ahead);
}
