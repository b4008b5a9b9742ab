import { type Kysely, sql } from "kysely";
import type { ConnectionQuery } from "../sql/postgres-pool.js";
import type { Schema } from "../sql/schema.js";
import { DatabaseInUse } from "../stores.js";

/**
 * How a bot's replicas say that they are running on a database, for what must run alone
 * (`npm run rotate-key`: a replica would go on sealing and opening tokens under the old key).
 *
 * Every store connection (open.ts: the pool's, kept open while idle) takes this advisory lock
 * in shared mode as soon as it connects, and holds it until it closes: any number of replicas
 * share it, idle or not, and a replica that dies (its connections with it) lets it go.
 * `refuseWhileReplicasRun` takes it in exclusive mode for its transaction, which only succeeds
 * when no other connection holds it; while that transaction runs, a replica that starts (or
 * reconnects) is refused, with a sentence saying why. Its second key is the schema, as for the
 * migrations' lock: bots in other schemas of the database are other bots.
 */
export const REPLICA_LOCK = 0x626f_7473; // "bots"

const ROTATION_RUNNING =
  "npm run rotate-key is running on this database; start the bot again once it has finished";

/** What each new store connection runs first (sql/postgres-pool.ts: onConnect). */
export function replicaLock(schema: string | undefined): (query: ConnectionQuery) => Promise<void> {
  return async (query) => {
    const [row] = await query(
      "SELECT pg_try_advisory_lock_shared($1, hashtext(COALESCE($2::text, current_schema(), ''))) AS ok",
      [REPLICA_LOCK, schema ?? null],
    );
    if (row?.ok !== true) throw new Error(ROTATION_RUNNING);
  };
}

/**
 * Inside a transaction: throws DatabaseInUse unless this connection is the only one on the
 * database holding the replica lock (it keeps it, exclusive, until the transaction ends), and
 * no conversation lease is live at `now`. A lease is a second sign: its replica may be between
 * two connections, or killed less than LEASE_SECONDS ago (its lease then runs out alone).
 */
export async function refuseWhileReplicasRun(
  trx: Kysely<Schema>,
  schema: string | undefined,
  now: number,
): Promise<void> {
  const { rows } = await sql<{ ok: boolean }>`
    SELECT pg_try_advisory_xact_lock(${REPLICA_LOCK},
      hashtext(COALESCE(${schema ?? null}::text, current_schema(), ''))) AS ok`.execute(trx);
  if (rows[0]?.ok !== true) throw new DatabaseInUse("another connection of a bot holds it");
  const leases = await trx
    .selectFrom("conversation_leases")
    .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.max("expires_at").as("until")])
    .where("expires_at", ">", now)
    .executeTakeFirst();
  const live = Number(leases?.n ?? 0);
  if (live > 0) {
    const seconds = Math.ceil((Number(leases?.until) - now) / 1000);
    throw new DatabaseInUse(
      `${live} conversation lease${live === 1 ? " is" : "s are"} live; a replica that was killed lets go of its leases within ${seconds} s`,
    );
  }
}
