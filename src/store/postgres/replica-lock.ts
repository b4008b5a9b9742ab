import { DatabaseInUse } from "../stores.js";
import type { ConnectStep, SyncPostgres } from "./sync-client.js";

/**
 * How a bot's replicas say that they are running on a database, for what must run alone
 * (`npm run rotate-key`: a replica would go on sealing and opening tokens under the old key).
 *
 * Every store connection (open.ts) takes this advisory lock in shared mode as soon as it
 * connects, and holds it until it closes: any number of replicas share it, idle or not, and a
 * replica that dies (its connection with it) lets it go. `refuseWhileReplicasRun` takes it in
 * exclusive mode for its transaction, which only succeeds when no other connection holds it;
 * while that transaction runs, a replica that starts (or reconnects) is refused, with a
 * sentence saying why. Its second key is the schema, as for the migrations' lock: bots in
 * other schemas of the database are other bots.
 */
const REPLICA_LOCK = 0x626f_7473; // "bots"
const SCHEMA_KEY = "hashtext(COALESCE($2::text, current_schema(), ''))";

/** The step each new store connection runs first (sync-client.ts: onConnect). */
export function replicaLock(schema: string | undefined): ConnectStep {
  return {
    sql: `SELECT pg_try_advisory_lock_shared($1, ${SCHEMA_KEY}) AS ok`,
    params: [REPLICA_LOCK, schema ?? null],
    refusal:
      "npm run rotate-key is running on this database; start the bot again once it has finished",
  };
}

/**
 * Inside a transaction: throws DatabaseInUse unless this connection is the only one on the
 * database holding the replica lock (it keeps it, exclusive, until the transaction ends), and
 * no conversation lease is live at `now`. A lease is a second sign: its replica may be between
 * two connections, or killed less than LEASE_SECONDS ago (its lease then runs out alone).
 */
export function refuseWhileReplicasRun(db: SyncPostgres, now: number): void {
  const alone = db.first<{ ok: boolean }>(
    `SELECT pg_try_advisory_xact_lock($1, ${SCHEMA_KEY}) AS ok`,
    [REPLICA_LOCK, db.schema ?? null],
  );
  if (alone?.ok !== true) throw new DatabaseInUse("another connection of a bot holds it");
  const leases = db.first<{ n: number; until: number | null }>(
    "SELECT COUNT(*) AS n, MAX(expires_at) AS until FROM conversation_leases WHERE expires_at > $1",
    [now],
  );
  const live = Number(leases?.n ?? 0);
  if (live > 0) {
    const seconds = Math.ceil((Number(leases?.until) - now) / 1000);
    throw new DatabaseInUse(
      `${live} conversation lease${live === 1 ? " is" : "s are"} live; a replica that was killed lets go of its leases within ${seconds} s`,
    );
  }
}
