import type { Kysely } from "kysely";
import type { AssistantChoiceStore } from "../stores.js";
import type { AssistantChoicesTable, Schema } from "./schema.js";

type Scope = AssistantChoicesTable["scope"];

/** The assistants chosen per channel and per person, in SQL (SQLite or PostgreSQL). */
export class SqlAssistantChoiceStore implements AssistantChoiceStore {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly now: () => number = Date.now,
  ) {}

  forChannel(team: string, channel: string): Promise<string | undefined> {
    return this.get(team, "channel", channel);
  }

  setForChannel(team: string, channel: string, assistantId: string | null): Promise<void> {
    return this.set(team, "channel", channel, assistantId);
  }

  forPerson(team: string, user: string): Promise<string | undefined> {
    return this.get(team, "person", user);
  }

  setForPerson(team: string, user: string, assistantId: string | null): Promise<void> {
    return this.set(team, "person", user, assistantId);
  }

  private async get(team: string, scope: Scope, key: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("assistant_choices")
      .select("assistant_id")
      .where("team", "=", team)
      .where("scope", "=", scope)
      .where("key", "=", key)
      .executeTakeFirst();
    return row?.assistant_id;
  }

  private async set(
    team: string,
    scope: Scope,
    key: string,
    assistantId: string | null,
  ): Promise<void> {
    if (assistantId === null) {
      await this.db
        .deleteFrom("assistant_choices")
        .where("team", "=", team)
        .where("scope", "=", scope)
        .where("key", "=", key)
        .execute();
      return;
    }
    await this.db
      .insertInto("assistant_choices")
      .values({ team, scope, key, assistant_id: assistantId, updated_at: this.now() })
      .onConflict((conflict) =>
        conflict.columns(["team", "scope", "key"]).doUpdateSet((eb) => ({
          assistant_id: eb.ref("excluded.assistant_id"),
          updated_at: eb.ref("excluded.updated_at"),
        })),
      )
      .execute();
  }
}
