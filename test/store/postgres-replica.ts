/**
 * A replica of the bot's stores in a process of its own, for the PostgreSQL tests of what
 * only separate connections racing can show (test/store/postgres.test.ts). Run as
 * `node --import tsx postgres-replica.ts <schema> open`, `… claim <holder> <id>…` or
 * `… occupy <key> <limit> <count>` (slots taken: how many it got), with the
 * database URL in POSTGRES_REPLICA_URL. It gets ready (loads its code and, to claim, opens
 * the stores), prints "ready", waits for a line on stdin that names the moment (epoch ms)
 * every replica starts at, waits for it, then does its work and prints one JSON line: what
 * it found, or `{ "error": message }`.
 */
import { createInterface } from "node:readline";
import { CompiledQuery } from "kysely";
import { BudgetDb } from "../../src/budgets/postgres/budget-db.js";
import { SlotTable } from "../../src/budgets/postgres/slots.js";
import { openPostgresStores } from "../../src/store/postgres/open.js";
import { postgresDatabase } from "../../src/store/sql/postgres-pool.js";

const [schema, command, ...args] = process.argv.slice(2);
const url = process.env.POSTGRES_REPLICA_URL ?? "";

async function main(): Promise<unknown> {
  const options = { schema: schema as string };
  if (command === "open") {
    await go();
    const stores = openPostgresStores(url, Date.now, options);
    try {
      await stores.opened;
    } finally {
      await stores.close();
    }
    return { opened: true };
  }
  if (command === "occupy") {
    // Takes slots of one key, one after the other, as many as it asks for.
    const [key, limit, count] = args;
    const database = postgresDatabase(url, { ...options, max: 1 });
    const slots = new SlotTable(
      new BudgetDb(
        async (text, params) =>
          (await database.db.executeQuery(CompiledQuery.raw(text, [...params]))).rows as never[],
      ),
    );
    try {
      await go();
      let got = 0;
      for (let i = 0; i < Number(count); i++) {
        const ids = await slots.occupy(key as string, 0, {
          limit: Number(limit),
          untilAt: 1_000,
          held: false,
          count: 1,
        });
        got += ids.taken.length;
      }
      return got;
    } finally {
      await database.close();
    }
  }
  const [holder, ...ids] = args;
  const stores = openPostgresStores(url, Date.now, options);
  try {
    await go();
    const claims = [];
    for (const id of ids)
      claims.push(await stores.leases.claim(Number(id), holder as string, 60_000));
    return claims;
  } finally {
    await stores.close();
  }
}

/** Says it is ready, and resolves at the moment the line it is sent names. */
function go(): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  process.stdout.write("ready\n");
  return new Promise((resolve) =>
    lines.once("line", (line) => {
      lines.close();
      // A timer could fire a few ms late, and differently in each replica: the point is to
      // start together.
      const at = Number(line);
      while (Date.now() < at) {}
      resolve();
    }),
  );
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`);
    process.exitCode = 1;
  },
);
