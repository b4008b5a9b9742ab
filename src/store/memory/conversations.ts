import type { Immediate } from "../immediate.js";
import type { Conversation, ConversationKey, ConversationStore } from "../stores.js";

/** Conversations in a Map: the core's tests use it in place of SQLite. */
export class MemoryConversationStore implements Immediate<ConversationStore> {
  private readonly rows = new Map<number, Conversation>();

  find(key: ConversationKey): Conversation | undefined {
    for (const c of this.rows.values()) {
      if (c.team === key.team && c.channel === key.channel && c.threadTs === key.threadTs) {
        return { ...c };
      }
    }
    return undefined;
  }

  byId(id: number): Conversation | undefined {
    const row = this.rows.get(id);
    return row && { ...row };
  }

  byServiceThread(serviceThreadId: string): Conversation | undefined {
    for (const c of this.rows.values()) if (c.serviceThreadId === serviceThreadId) return { ...c };
    return undefined;
  }

  ensure(key: ConversationKey, assistantId: string): Conversation {
    const found = this.find(key);
    if (found) return found;
    const id = this.rows.size + 1;
    const created: Conversation = {
      ...key,
      id,
      assistantId,
      serviceThreadId: null,
      serviceThreadOwner: null,
      passedThroughTs: null,
    };
    this.rows.set(id, created);
    return { ...created };
  }

  setServiceThread(id: number, serviceThreadId: string, owner: string | null) {
    const row = this.rows.get(id);
    if (row && row.serviceThreadId === null) {
      row.serviceThreadId = serviceThreadId;
      row.serviceThreadOwner = owner;
    }
    return this.byId(id);
  }

  setPassedThrough(id: number, ts: string): void {
    const row = this.rows.get(id);
    if (row) row.passedThroughTs = ts;
  }
}
