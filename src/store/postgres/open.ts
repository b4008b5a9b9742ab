import { promised } from "../immediate.js";
import type {
  AssistantChoiceStore,
  ConversationStore,
  FeedbackStore,
  InstallationStore,
  LeaseStore,
  LinkedTokenStore,
  SettingsStore,
  Stores,
  TurnStore,
} from "../stores.js";
import { PostgresAssistantChoiceStore } from "./assistant-choices.js";
import { PostgresConversationStore } from "./conversations.js";
import { describeServer, PostgresOpenError } from "./errors.js";
import { PostgresFeedbackStore } from "./feedback.js";
import { PostgresInstallationStore } from "./installations.js";
import { PostgresLeaseStore } from "./leases.js";
import { PostgresLinkedTokenStore } from "./linked-tokens.js";
import { migrate } from "./migrations.js";
import { refuseWhileReplicasRun, replicaLock } from "./replica-lock.js";
import { PostgresSettingsStore } from "./settings.js";
import { SyncPostgres, type SyncPostgresOptions } from "./sync-client.js";
import { PostgresTurnStore } from "./turns.js";

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
  return {
    conversations: promised<ConversationStore>(new PostgresConversationStore(open, now)),
    turns: promised<TurnStore>(new PostgresTurnStore(open, now)),
    settings: promised<SettingsStore>(new PostgresSettingsStore(open, now)),
    feedback: promised<FeedbackStore>(new PostgresFeedbackStore(open, now)),
    linkedTokens: promised<LinkedTokenStore>(new PostgresLinkedTokenStore(open, now)),
    assistantChoices: promised<AssistantChoiceStore>(new PostgresAssistantChoiceStore(open, now)),
    leases: promised<LeaseStore>(new PostgresLeaseStore(open, now)),
    installations: promised<InstallationStore>(new PostgresInstallationStore(open, now)),
    exclusively: (fn) =>
      open.transactionOf(() => {
        refuseWhileReplicasRun(open, now());
        return fn();
      }),
    ping: async () => open.ping(),
    close: async () => {
      open.close();
    },
  };
}
