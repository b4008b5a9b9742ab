import { type Kysely, sql } from "kysely";
import type pg from "pg";
import { SqlAssistantChoiceStore } from "../sql/assistant-choices.js";
import { SqlConversationStore } from "../sql/conversations.js";
import { SqlFeedbackStore } from "../sql/feedback.js";
import { SqlInstallationStore } from "../sql/installations.js";
import { SqlLeaseStore } from "../sql/leases.js";
import { SqlLinkedTokenStore } from "../sql/linked-tokens.js";
import { type PostgresPoolOptions, postgresDatabase } from "../sql/postgres-pool.js";
import type { Schema } from "../sql/schema.js";
import { SqlSettingsStore } from "../sql/settings.js";
import { SqlTurnStore } from "../sql/turns.js";
import type { Stores } from "../stores.js";
import { describeServer, PostgresOpenError, redact } from "./errors.js";
import { migrate } from "./migrations.js";
import { refuseWhileReplicasRun, replicaLock } from "./replica-lock.js";

/**
 * A bot's connections for what Slack's acknowledgement waits for (a question's record), apart
 * from the turns' twenty: each acknowledgement holds one for a round trip. On the same twenty,
 * a record queued behind the turns' statements whenever a burst of answers kept all of them
 * busy (in traces of the bench, the pool's wait p99 58 to 84 ms).
 */
const ACKNOWLEDGING_CONNECTIONS = 2;

export interface PostgresStoreOptions
  extends Pick<
    PostgresPoolOptions,
    "schema" | "callTimeoutMs" | "statementTimeoutMs" | "connectTimeoutMs" | "max"
  > {
  /**
   * Whether a bot opens them (the default): each connection then holds the replica lock, and
   * the open is refused while `npm run rotate-key` runs. The rotation itself opens them with
   * false, so that only bots' connections keep it from running (replica-lock.ts).
   */
  bot?: boolean;
}

/** The stores, and when they are open: the schema migrated (or why it could not be). */
export type PostgresStores = Stores & { opened: Promise<void> };

/**
 * Every store in one PostgreSQL database, shared with any other replica of the bot on the
 * same database, on a pool of `pg` connections: every statement awaited, never waited for on
 * the event loop. The schema is created and migrated at once, on one of its connections
 * (migrations.ts), and every statement waits for that; `opened` settles with it, failing with
 * one clear error, without the URL, when the server cannot be reached or its schema is newer
 * than this code (openStores awaits it). Each connection holds the replica lock while it is
 * open (replica-lock.ts).
 */
export function openPostgresStores(
  url: string,
  now: () => number = Date.now,
  options: PostgresStoreOptions = {},
): PostgresStores {
  const { schema, bot = true } = options;
  const where = `${describeServer(url)}${schema ? ` (schema ${schema})` : ""}`;
  const queries = postgresDatabase(url, {
    ...options,
    // A bot's first questions find half its connections open.
    ...(bot && {
      onConnect: replicaLock(schema),
      warm: Math.ceil((options.max ?? 20) / 2),
      acknowledging: ACKNOWLEDGING_CONNECTIONS,
    }),
    first: async (pool) => {
      const said = (error: unknown) =>
        redact(error instanceof Error ? error.message : String(error), url);
      let client: pg.PoolClient;
      try {
        // A bot that starts while the rotation runs is refused here (the connection's replica
        // lock), before it migrates, not at its first question.
        client = await pool.connect();
      } catch (error) {
        throw new PostgresOpenError(
          where,
          new Error(`cannot connect to PostgreSQL: ${said(error)}`),
        );
      }
      try {
        await migrate(client, schema, now);
      } catch (error) {
        throw new PostgresOpenError(where, new Error(said(error)));
      } finally {
        client.release();
      }
    },
  });
  const people = (db: Kysely<Schema>) => ({
    linkedTokens: new SqlLinkedTokenStore(db, now),
    installations: new SqlInstallationStore(db, now),
  });
  return {
    opened: queries.opened,
    conversations: new SqlConversationStore(queries.db, now),
    turns: new SqlTurnStore(queries, now),
    settings: new SqlSettingsStore(queries.db, now),
    feedback: new SqlFeedbackStore(queries, now),
    assistantChoices: new SqlAssistantChoiceStore(queries.db, now),
    leases: new SqlLeaseStore(queries, now),
    ...people(queries.db),
    exclusively: (fn) =>
      queries.db.transaction().execute(async (trx) => {
        await refuseWhileReplicasRun(trx, schema, now());
        return fn(people(trx));
      }),
    // On the pool: a stalled server leaves the event loop free (/readyz times the answer).
    ping: async () => {
      try {
        const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(queries.db);
        return rows[0]?.ok === 1;
      } catch {
        return false;
      }
    },
    // Its commits are on the server's disk when it answers.
    durable: async () => undefined,
    close: () => queries.close(),
  };
}
