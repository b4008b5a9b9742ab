import type { RunSettings } from "../../service/schemas.js";
import type { Immediate } from "../immediate.js";
import { type SettingsRow as Row, toSettings } from "../rows.js";
import type { SettingsChange, SettingsKey, SettingsStore } from "../stores.js";
import type { Db } from "./db.js";

/** The settings in SQLite. */
export class SqliteSettingsStore implements Immediate<SettingsStore> {
  private readonly getStmt;
  private readonly upsertStmt;
  private readonly allStmt;

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.getStmt = db.prepare<[string, string, string], Row>(
      "SELECT model_override, reasoning_effort, max_steps FROM settings WHERE team = ? AND channel = ? AND user = ?",
    );
    this.allStmt = db.prepare<[string, string], Row & { channel: string }>(
      `SELECT channel, model_override, reasoning_effort, max_steps FROM settings
       WHERE team = ? AND user = ? ORDER BY channel`,
    );
    this.upsertStmt = db.prepare(
      `INSERT INTO settings (team, channel, user, model_override, reasoning_effort, max_steps, updated_at)
       VALUES (@team, @channel, @user, @model, @effort, @steps, @now)
       ON CONFLICT (team, channel, user) DO UPDATE SET
         model_override = @model, reasoning_effort = @effort, max_steps = @steps, updated_at = @now`,
    );
  }

  get(key: SettingsKey): RunSettings {
    return toSettings(this.getStmt.get(key.team, key.channel, key.user));
  }

  allFor(team: string, user: string): { channel: string; settings: RunSettings }[] {
    return this.allStmt
      .all(team, user)
      .map((row) => ({ channel: row.channel, settings: toSettings(row) }))
      .filter((row) => Object.keys(row.settings).length > 0);
  }

  update(key: SettingsKey, change: SettingsChange): RunSettings {
    const merged: Record<string, unknown> = { ...this.get(key) };
    for (const [field, value] of Object.entries(change)) {
      if (value === null) delete merged[field];
      else if (value !== undefined) merged[field] = value;
    }
    const next = merged as RunSettings;
    this.upsertStmt.run({
      ...key,
      model: next.modelOverride ?? null,
      effort: next.reasoning_effort ?? null,
      steps: next.maxSteps ?? null,
      now: this.now(),
    });
    return next;
  }
}
