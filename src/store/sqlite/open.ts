import { promised } from "../immediate.js";
import { SqlAssistantChoiceStore } from "../sql/assistant-choices.js";
import { SqlConversationStore } from "../sql/conversations.js";
import { SqlFeedbackStore } from "../sql/feedback.js";
import { SqlLeaseStore } from "../sql/leases.js";
import { SqlSettingsStore } from "../sql/settings.js";
import { sqliteDatabase } from "../sql/sqlite-database.js";
import { SqlTurnStore } from "../sql/turns.js";
import type { InstallationStore, LinkedTokenStore, Stores } from "../stores.js";
import { type Db, openDatabase } from "./db.js";
import { SqliteInstallationStore } from "./installations.js";
import { SqliteLinkedTokenStore } from "./linked-tokens.js";
import { WalSync } from "./wal-sync.js";

/**
 * Every store in one SQLite file (created and migrated if needed; see db.ts), or in memory
 * with `:memory:`.
 */
export function openSqliteStores(path: string, now: () => number = Date.now): Stores {
  return sqliteStoresOver(openDatabase(path), now);
}

/** Every store over a file opened by db.ts (the bench opens its own, to set it apart). */
export function sqliteStoresOver(db: Db, now: () => number = Date.now): Stores {
  // The file is this process's alone (db.ts): a lease in it was left by one that died.
  db.exec("DELETE FROM conversation_leases");
  const queries = sqliteDatabase(db);
  const wal = db.memory ? undefined : new WalSync(db.name);
  return {
    conversations: new SqlConversationStore(queries.db, now),
    turns: new SqlTurnStore(queries, now),
    settings: new SqlSettingsStore(queries.db, now),
    feedback: new SqlFeedbackStore(queries, now),
    linkedTokens: promised<LinkedTokenStore>(new SqliteLinkedTokenStore(db, now)),
    assistantChoices: new SqlAssistantChoiceStore(queries.db, now),
    leases: new SqlLeaseStore(queries, now),
    installations: promised<InstallationStore>(new SqliteInstallationStore(db, now)),
    // The file is this process's alone from the open (db.ts): no other bot can be on it.
    exclusively: (fn) => exclusively(db, fn),
    ping: async () => db.open && db.prepare("SELECT 1 AS ok").get() !== undefined,
    durable: async () => wal?.flush(),
    close: async () => {
      await wal?.close();
      // The query layer closes the file if it ever used it; otherwise it is closed here.
      await queries.db.destroy();
      if (db.open) db.close();
    },
  };
}

/**
 * `fn` in one transaction (BEGIN IMMEDIATE), committed when it resolves and rolled back when
 * it fails. Only `npm run rotate-key` calls it, with nothing else running on the connection:
 * every statement made while `fn` awaits belongs to the transaction.
 */
async function exclusively<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = await fn();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
