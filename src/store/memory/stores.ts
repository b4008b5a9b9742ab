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
import { MemoryAssistantChoiceStore } from "./assistant-choices.js";
import { MemoryConversationStore } from "./conversations.js";
import { MemoryFeedbackStore } from "./feedback.js";
import { MemoryInstallationStore } from "./installations.js";
import { MemoryLeaseStore } from "./leases.js";
import { MemoryLinkedTokenStore } from "./linked-tokens.js";
import { MemorySettingsStore } from "./settings.js";
import { MemoryTurnStore } from "./turns.js";

/** Every store in memory: for fast tests of the core, gone when the process ends. */
export function memoryStores(now: () => number = Date.now): Stores {
  const turns = new MemoryTurnStore(now);
  return {
    conversations: promised<ConversationStore>(new MemoryConversationStore()),
    turns: promised<TurnStore>(turns),
    settings: promised<SettingsStore>(new MemorySettingsStore()),
    feedback: promised<FeedbackStore>(new MemoryFeedbackStore(now)),
    linkedTokens: promised<LinkedTokenStore>(new MemoryLinkedTokenStore(now)),
    assistantChoices: promised<AssistantChoiceStore>(new MemoryAssistantChoiceStore()),
    leases: promised<LeaseStore>(new MemoryLeaseStore(turns, now)),
    installations: promised<InstallationStore>(new MemoryInstallationStore(now)),
    exclusively: (fn) => fn(),
    ping: async () => true,
    close: async () => undefined,
  };
}
