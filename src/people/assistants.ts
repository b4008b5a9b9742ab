import type { AssistantChoice } from "../config-people.js";
import type { AssistantChoiceStore, AssistantPick } from "../store/stores.js";

/** Where a new conversation starts: a channel's thread, or a person's DM with the bot. */
export interface ConversationPlace {
  team: string;
  channel: string;
  user: string;
  /** A DM with the bot (the agent view included): the person's own choice applies. */
  isDirect: boolean;
}

/**
 * The assistants people may choose (ASSISTANTS) and the choices made: per channel by
 * workspace admins (`/assistant use`), per person for their DMs (the App Home). A choice of an
 * assistant the operator has since taken off the list falls back to the default.
 */
export class Assistants {
  constructor(
    readonly list: readonly AssistantChoice[],
    private readonly store: AssistantChoiceStore,
  ) {
    if (list.length === 0) throw new RangeError("at least the default assistant is listed");
  }

  /** ASSISTANT_ID's entry. */
  get default(): AssistantChoice {
    return this.list[0] as AssistantChoice;
  }

  /** An assistant by id, or by label in any case. */
  find(idOrLabel: string): AssistantChoice | undefined {
    const wanted = idOrLabel.trim();
    return (
      this.list.find((a) => a.id === wanted) ??
      this.list.find((a) => a.id.toLowerCase() === wanted.toLowerCase()) ??
      this.list.find((a) => a.label.toLowerCase() === wanted.toLowerCase())
    );
  }

  /** The label of an id (a conversation's assistant may no longer be listed: its id then). */
  labelOf(id: string): string {
    return this.list.find((a) => a.id === id)?.label ?? id;
  }

  async forChannel(team: string, channel: string): Promise<AssistantChoice> {
    return this.listed(await this.store.forChannel(team, channel));
  }

  setForChannel(team: string, channel: string, choice: AssistantChoice | undefined): Promise<void> {
    return this.store.setForChannel(team, channel, choice?.id ?? null);
  }

  async forPerson(team: string, user: string): Promise<AssistantChoice> {
    return this.listed(await this.store.forPerson(team, user));
  }

  setForPerson(team: string, user: string, choice: AssistantChoice | undefined): Promise<void> {
    return this.store.setForPerson(team, user, choice?.id ?? null);
  }

  /**
   * The assistant a new conversation here talks to (it keeps it for good): the person's choice
   * in a DM, the channel's elsewhere, if still listed. Read when the conversation is recorded;
   * with only the default listed there is nothing to read.
   */
  forNewConversation(place: ConversationPlace): string | AssistantPick {
    if (this.list.length === 1) return this.default.id;
    return {
      place: place.isDirect
        ? { scope: "person", key: place.user }
        : { scope: "channel", key: place.channel },
      listed: this.list.map((a) => a.id),
      otherwise: this.default.id,
    };
  }

  private listed(id: string | undefined): AssistantChoice {
    return (id === undefined ? undefined : this.list.find((a) => a.id === id)) ?? this.default;
  }
}
