import type { RunSettings } from "../service/schemas.js";

/** A person's settings as a row of the `settings` table, the same in SQLite and PostgreSQL. */
export interface SettingsRow {
  model_override: string | null;
  reasoning_effort: string | null;
  max_steps: number | null;
}

/** The settings a row holds; no row: none set. */
export function toSettings(row: SettingsRow | undefined): RunSettings {
  const settings: RunSettings = {};
  if (row?.model_override) settings.modelOverride = row.model_override as "flash" | "max";
  if (row?.reasoning_effort) {
    settings.reasoning_effort = row.reasoning_effort as NonNullable<
      RunSettings["reasoning_effort"]
    >;
  }
  if (row?.max_steps) settings.maxSteps = row.max_steps;
  return settings;
}
