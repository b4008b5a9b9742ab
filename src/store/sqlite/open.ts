import type { Stores } from "../stores.js";
import { SqliteAssistantChoiceStore } from "./assistant-choices.js";
import { SqliteConversationStore } from "./conversations.js";
import { openDatabase } from "./db.js";
import { SqliteFeedbackStore } from "./feedback.js";
import { SqliteInstallationStore } from "./installations.js";
import { clearLeases, SqliteLeaseStore } from "./leases.js";
import { SqliteLinkedTokenStore } from "./linked-tokens.js";
import { SqliteSettingsStore } from "./settings.js";
import { SqliteTurnStore } from "./turns.js";
import { WalSync } from "./wal-sync.js";

/** Every store in one SQLite file (created and migrated if needed; see db.ts). */
export function openSqliteStores(path: string, now: () => number = Date.now): Stores {
  const db = openDatabase(path);
  clearLeases(db);
  const wal = path === ":memory:" ? undefined : new WalSync(path);
  return {
    conversations: new SqliteConversationStore(db, now),
    turns: new SqliteTurnStore(db, now),
    settings: new SqliteSettingsStore(db, now),
    feedback: new SqliteFeedbackStore(db, now),
    linkedTokens: new SqliteLinkedTokenStore(db, now),
    assistantChoices: new SqliteAssistantChoiceStore(db, now),
    leases: new SqliteLeaseStore(db, now),
    installations: new SqliteInstallationStore(db, now),
    // The file is this process's alone from the open (db.ts): no other bot can be on it.
    exclusively: (fn) => db.transaction(fn).immediate(),
    ping: () => db.open && db.prepare("SELECT 1 AS ok").get() !== undefined,
    durable: async () => wal?.flush(),
    durableNow: () => wal?.flushSync(),
    close: () => {
      void wal?.close();
      db.close();
    },
  };
}
