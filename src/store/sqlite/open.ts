import { SqlAssistantChoiceStore } from "../sql/assistant-choices.js";
import { SqlConversationStore } from "../sql/conversations.js";
import { SqlFeedbackStore } from "../sql/feedback.js";
import { SqlInstallationStore } from "../sql/installations.js";
import { SqlLeaseStore } from "../sql/leases.js";
import { SqlLinkedTokenStore } from "../sql/linked-tokens.js";
import { SqlSettingsStore } from "../sql/settings.js";
import { sqliteDatabase } from "../sql/sqlite-database.js";
import { SqlTurnStore } from "../sql/turns.js";
import type { Stores } from "../stores.js";
import { type Db, openDatabase } from "./db.js";
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
    linkedTokens: new SqlLinkedTokenStore(queries.db, now),
    assistantChoices: new SqlAssistantChoiceStore(queries.db, now),
    leases: new SqlLeaseStore(queries, now),
    installations: new SqlInstallationStore(queries.db, now),
    // The file is this process's alone from the open (db.ts): no other bot can be on it.
    exclusively: (fn) =>
      queries.db.transaction().execute((trx) =>
        fn({
          linkedTokens: new SqlLinkedTokenStore(trx, now),
          installations: new SqlInstallationStore(trx, now),
        }),
      ),
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
