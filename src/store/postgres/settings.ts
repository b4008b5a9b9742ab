import type { RunSettings } from "../../service/schemas.js";
import type { Immediate } from "../immediate.js";
import { type SettingsRow as Row, toSettings } from "../rows.js";
import type { SettingsChange, SettingsKey, SettingsStore } from "../stores.js";
import type { SyncPostgres } from "./sync-client.js";

/** The settings in PostgreSQL. */
export class PostgresSettingsStore implements Immediate<SettingsStore> {
  constructor(
    private readonly db: SyncPostgres,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: SettingsKey): RunSettings {
    return toSettings(
      this.db.first<Row>(
        `SELECT model_override, reasoning_effort, max_steps FROM settings
         WHERE team = $1 AND channel = $2 AND "user" = $3`,
        [key.team, key.channel, key.user],
      ),
    );
  }

  allFor(team: string, user: string): { channel: string; settings: RunSettings }[] {
    // Byte order (COLLATE "C"), as SQLite sorts, whatever the database's locale.
    return this.db
      .rows<Row & { channel: string }>(
        `SELECT channel, model_override, reasoning_effort, max_steps FROM settings
         WHERE team = $1 AND "user" = $2 ORDER BY channel COLLATE "C"`,
        [team, user],
      )
      .map((row) => ({ channel: row.channel, settings: toSettings(row) }))
      .filter((row) => Object.keys(row.settings).length > 0);
  }

  /**
   * One statement merges the change into what is stored, field by field (a field absent from
   * the change keeps the stored value): a change made by another replica at the same moment
   * to another field is kept, not overwritten with what this one had read.
   */
  update(key: SettingsKey, change: SettingsChange): RunSettings {
    const fields = [change.modelOverride, change.reasoning_effort, change.maxSteps] as const;
    const row = this.db.first<Row>(
      `INSERT INTO settings (team, channel, "user", model_override, reasoning_effort, max_steps, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (team, channel, "user") DO UPDATE SET
         model_override = CASE WHEN $8 THEN excluded.model_override ELSE settings.model_override END,
         reasoning_effort = CASE WHEN $9 THEN excluded.reasoning_effort ELSE settings.reasoning_effort END,
         max_steps = CASE WHEN $10 THEN excluded.max_steps ELSE settings.max_steps END,
         updated_at = excluded.updated_at
       RETURNING model_override, reasoning_effort, max_steps`,
      [
        key.team,
        key.channel,
        key.user,
        ...fields.map((value) => value ?? null),
        this.now(),
        ...fields.map((value) => value !== undefined),
      ],
    );
    return toSettings(row);
  }
}
