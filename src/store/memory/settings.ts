import type { RunSettings } from "../../service/schemas.js";
import type { Immediate } from "../immediate.js";
import type { SettingsChange, SettingsKey, SettingsStore } from "../stores.js";

/** Settings in a Map: the core's tests use it in place of SQLite. */
export class MemorySettingsStore implements Immediate<SettingsStore> {
  private readonly rows = new Map<string, RunSettings>();

  get(key: SettingsKey): RunSettings {
    return { ...this.rows.get(keyOf(key)) };
  }

  update(key: SettingsKey, change: SettingsChange): RunSettings {
    const merged: Record<string, unknown> = this.get(key);
    for (const [field, value] of Object.entries(change)) {
      if (value === null) delete merged[field];
      else if (value !== undefined) merged[field] = value;
    }
    this.rows.set(keyOf(key), merged as RunSettings);
    return this.get(key);
  }

  allFor(team: string, user: string): { channel: string; settings: RunSettings }[] {
    const found: { channel: string; settings: RunSettings }[] = [];
    for (const [key, settings] of this.rows) {
      const [rowTeam, channel, rowUser] = key.split("\u0000");
      if (rowTeam !== team || rowUser !== user || channel === undefined) continue;
      if (Object.keys(settings).length > 0) found.push({ channel, settings: { ...settings } });
    }
    return found.sort((a, b) => a.channel.localeCompare(b.channel));
  }
}

const keyOf = (key: SettingsKey) => `${key.team}\u0000${key.channel}\u0000${key.user}`;
