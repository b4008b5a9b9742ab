import { sql } from "kysely";
import { promised } from "../immediate.js";
import { SqlAssistantChoiceStore } from "../sql/assistant-choices.js";
import { SqlConversationStore } from "../sql/conversations.js";
import { SqlFeedbackStore } from "../sql/feedback.js";
import { SqlLeaseStore } from "../sql/leases.js";
import { postgresDatabase } from "../sql/postgres-pool.js";
import { SqlSettingsStore } from "../sql/settings.js";
import { SqlTurnStore } from "../sql/turns.js";
import type { InstallationStore, LinkedTokenStore, Stores } from "../stores.js";
import { describeServer, PostgresOpenError } from "./errors.js";
import { PostgresInstallationStore } from "./installations.js";
import { PostgresLinkedTokenStore } from "./linked-tokens.js";
import { migrate } from "./migrations.js";
import { refuseWhileReplicasRun, replicaLock } from "./replica-lock.js";
import { SyncPostgres, type SyncPostgresOptions } from "./sync-client.js";

/**
 * Every store in one PostgreSQL database (its schema created and migrated if needed; see
 * migrations.ts), shared with any other replica of the bot on the same database. Fails with
 * one clear error, without the URL, when the server cannot be reached or its schema is newer
 * than this code.
 */
export function openPostgresStores(
  url: string,
  now: () => number = Date.now,
  options: SyncPostgresOptions = {},
): Stores {
  let db: SyncPostgres | undefined;
  try {
    // Every store connection says a bot runs here, for as long as it is open (replica-lock.ts).
    db = new SyncPostgres(url, { ...options, onConnect: [replicaLock(options.schema)] });
    migrate(db, now);
  } catch (error) {
    db?.close();
    const where = `${describeServer(url)}${options.schema ? ` (schema ${options.schema})` : ""}`;
    throw new PostgresOpenError(where, error);
  }
  const open = db;
  // The stores moved to the query layer run on a pool of their own (sql/postgres-pool.ts):
  // awaited, never waited for on the event loop.
  const queries = postgresDatabase(url, {
    schema: options.schema,
    callTimeoutMs: options.callTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
  });
  return {
    conversations: new SqlConversationStore(queries.db, now),
    turns: new SqlTurnStore(queries, now),
    settings: new SqlSettingsStore(queries.db, now),
    feedback: new SqlFeedbackStore(queries, now),
    linkedTokens: promised<LinkedTokenStore>(new PostgresLinkedTokenStore(open, now)),
    assistantChoices: new SqlAssistantChoiceStore(queries.db, now),
    leases: new SqlLeaseStore(queries, now),
    installations: promised<InstallationStore>(new PostgresInstallationStore(open, now)),
    exclusively: (fn) =>
      open.transactionOf(() => {
        refuseWhileReplicasRun(open, now());
        return fn();
      }),
    // On the pool: a stalled server leaves the event loop free (/readyz times the answer).
    ping: async () => {
      const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(queries.db);
      return rows[0]?.ok === 1;
    },
    // Its commits are on the server's disk when it answers.
    durable: async () => undefined,
    close: async () => {
      try {
        await queries.db.destroy();
      } finally {
        open.close();
      }
    },
  };
}
