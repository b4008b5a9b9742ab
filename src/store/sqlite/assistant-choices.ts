import type { Immediate } from "../immediate.js";
import type { AssistantChoiceStore } from "../stores.js";
import type { Db } from "./db.js";

type Scope = "channel" | "person";

/** The assistants chosen per channel and per person, in SQLite. */
export class SqliteAssistantChoiceStore implements Immediate<AssistantChoiceStore> {
  private readonly getStmt;
  private readonly setStmt;
  private readonly clearStmt;

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.getStmt = db.prepare<[string, Scope, string], { assistant_id: string }>(
      "SELECT assistant_id FROM assistant_choices WHERE team = ? AND scope = ? AND key = ?",
    );
    this.setStmt = db.prepare(
      `INSERT INTO assistant_choices (team, scope, key, assistant_id, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (team, scope, key) DO UPDATE SET assistant_id = excluded.assistant_id, updated_at = excluded.updated_at`,
    );
    this.clearStmt = db.prepare(
      "DELETE FROM assistant_choices WHERE team = ? AND scope = ? AND key = ?",
    );
  }

  forChannel(team: string, channel: string): string | undefined {
    return this.getStmt.get(team, "channel", channel)?.assistant_id;
  }

  setForChannel(team: string, channel: string, assistantId: string | null): void {
    this.set(team, "channel", channel, assistantId);
  }

  forPerson(team: string, user: string): string | undefined {
    return this.getStmt.get(team, "person", user)?.assistant_id;
  }

  setForPerson(team: string, user: string, assistantId: string | null): void {
    this.set(team, "person", user, assistantId);
  }

  private set(team: string, scope: Scope, key: string, assistantId: string | null): void {
    if (assistantId === null) this.clearStmt.run(team, scope, key);
    else this.setStmt.run(team, scope, key, assistantId, this.now());
  }
}
