import type { Stores } from "../stores.js";
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
    conversations: new MemoryConversationStore(),
    turns,
    settings: new MemorySettingsStore(),
    feedback: new MemoryFeedbackStore(now),
    linkedTokens: new MemoryLinkedTokenStore(now),
    assistantChoices: new MemoryAssistantChoiceStore(),
    leases: new MemoryLeaseStore(turns, now),
    installations: new MemoryInstallationStore(now),
    exclusively: (fn) => fn(),
    ping: () => true,
    durable: async () => undefined,
    durableNow: () => undefined,
    close: () => undefined,
  };
}
