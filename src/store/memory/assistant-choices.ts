import type { Immediate } from "../immediate.js";
import type { AssistantChoiceStore } from "../stores.js";

/** The assistants chosen per channel and per person, in Maps. */
export class MemoryAssistantChoiceStore implements Immediate<AssistantChoiceStore> {
  private readonly rows = new Map<string, string>();

  forChannel(team: string, channel: string): string | undefined {
    return this.rows.get(keyOf(team, "channel", channel));
  }

  setForChannel(team: string, channel: string, assistantId: string | null): void {
    this.set(keyOf(team, "channel", channel), assistantId);
  }

  forPerson(team: string, user: string): string | undefined {
    return this.rows.get(keyOf(team, "person", user));
  }

  setForPerson(team: string, user: string, assistantId: string | null): void {
    this.set(keyOf(team, "person", user), assistantId);
  }

  private set(key: string, assistantId: string | null): void {
    if (assistantId === null) this.rows.delete(key);
    else this.rows.set(key, assistantId);
  }
}

const keyOf = (team: string, scope: string, key: string) => `${team}\u0000${scope}\u0000${key}`;
