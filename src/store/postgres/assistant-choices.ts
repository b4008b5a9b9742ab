import type { Immediate } from "../immediate.js";
import type { AssistantChoiceStore } from "../stores.js";
import type { SyncPostgres } from "./sync-client.js";

type Scope = "channel" | "person";

/** The assistants chosen per channel and per person, in PostgreSQL. */
export class PostgresAssistantChoiceStore implements Immediate<AssistantChoiceStore> {
  constructor(
    private readonly db: SyncPostgres,
    private readonly now: () => number = Date.now,
  ) {}

  forChannel(team: string, channel: string): string | undefined {
    return this.get(team, "channel", channel);
  }

  setForChannel(team: string, channel: string, assistantId: string | null): void {
    this.set(team, "channel", channel, assistantId);
  }

  forPerson(team: string, user: string): string | undefined {
    return this.get(team, "person", user);
  }

  setForPerson(team: string, user: string, assistantId: string | null): void {
    this.set(team, "person", user, assistantId);
  }

  private get(team: string, scope: Scope, key: string): string | undefined {
    return this.db.first<{ assistant_id: string }>(
      "SELECT assistant_id FROM assistant_choices WHERE team = $1 AND scope = $2 AND key = $3",
      [team, scope, key],
    )?.assistant_id;
  }

  private set(team: string, scope: Scope, key: string, assistantId: string | null): void {
    if (assistantId === null) {
      this.db.run("DELETE FROM assistant_choices WHERE team = $1 AND scope = $2 AND key = $3", [
        team,
        scope,
        key,
      ]);
      return;
    }
    this.db.run(
      `INSERT INTO assistant_choices (team, scope, key, assistant_id, updated_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (team, scope, key) DO UPDATE SET assistant_id = excluded.assistant_id,
         updated_at = excluded.updated_at`,
      [team, scope, key, assistantId, this.now()],
    );
  }
}
