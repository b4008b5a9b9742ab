import type { Stores } from "../stores.js";
import { MemoryConversationStore } from "./conversations.js";
import { MemoryFeedbackStore } from "./feedback.js";
import { MemorySettingsStore } from "./settings.js";
import { MemoryTurnStore } from "./turns.js";

/** Every store in memory: for fast tests of the core, gone when the process ends. */
export function memoryStores(now: () => number = Date.now): Stores {
  return {
    conversations: new MemoryConversationStore(),
    turns: new MemoryTurnStore(now),
    settings: new MemorySettingsStore(),
    feedback: new MemoryFeedbackStore(now),
    ping: () => true,
    close: () => undefined,
  };
}
