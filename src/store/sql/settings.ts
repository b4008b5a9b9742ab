import type { Kysely, QueryCreator } from "kysely";
import type { RunSettings } from "../../service/schemas.js";
import { toSettings } from "../rows.js";
import type { SettingsChange, SettingsKey, SettingsStore } from "../stores.js";
import { byteOrder } from "./order.js";
import type { Schema } from "./schema.js";

/** A person's settings, as the columns that hold them. */
export const FIELDS = ["model_override", "reasoning_effort", "max_steps"] as const;

/** A change as columns: a field absent from the change is absent here (it keeps its value). */
function columnsOf(change: SettingsChange): Partial<Record<(typeof FIELDS)[number], unknown>> {
  const columns: Partial<Record<(typeof FIELDS)[number], unknown>> = {};
  if (change.modelOverride !== undefined) columns.model_override = change.modelOverride;
  if (change.reasoning_effort !== undefined) columns.reasoning_effort = change.reasoning_effort;
  if (change.maxSteps !== undefined) columns.max_steps = change.maxSteps;
  return columns;
}

/** A person's run settings per channel, in SQL (SQLite or PostgreSQL). */
export class SqlSettingsStore implements SettingsStore {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: SettingsKey): Promise<RunSettings> {
    return toSettings(await settingsQuery(this.db, key).executeTakeFirst());
  }

  async allFor(team: string, user: string): Promise<{ channel: string; settings: RunSettings }[]> {
    const rows = await this.db
      .selectFrom("settings")
      .select(["channel", ...FIELDS])
      .where("team", "=", team)
      .where("user", "=", user)
      .execute();
    return rows
      .map((row) => ({ channel: row.channel, settings: toSettings(row) }))
      .filter((row) => Object.keys(row.settings).length > 0)
      .sort((a, b) => byteOrder(a.channel, b.channel));
  }

  /**
   * One statement merges the change into what is stored, field by field (a field absent from
   * the change keeps the stored value): a change made by another replica at the same moment
   * to another field is kept, not overwritten with what this one had read.
   */
  async update(key: SettingsKey, change: SettingsChange): Promise<RunSettings> {
    const columns = columnsOf(change);
    const row = await this.db
      .insertInto("settings")
      .values({
        ...key,
        model_override: null,
        reasoning_effort: null,
        max_steps: null,
        ...columns,
        updated_at: this.now(),
      } as Schema["settings"])
      .onConflict((conflict) =>
        conflict.columns(["team", "channel", "user"]).doUpdateSet((eb) => ({
          ...Object.fromEntries(
            Object.keys(columns).map((column) => [
              column,
              eb.ref(`excluded.${column as (typeof FIELDS)[number]}`),
            ]),
          ),
          updated_at: eb.ref("excluded.updated_at"),
        })),
      )
      .returning(FIELDS)
      .executeTakeFirstOrThrow();
    return toSettings(row);
  }
}

/** The statement that reads a person's settings in one channel (no row: none set). */
export function settingsQuery(db: QueryCreator<Schema>, key: SettingsKey) {
  return db
    .selectFrom("settings")
    .select(FIELDS)
    .where("team", "=", key.team)
    .where("channel", "=", key.channel)
    .where("user", "=", key.user);
}
