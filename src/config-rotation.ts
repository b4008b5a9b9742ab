import { ConfigError, type Env, readSettings, type Setting } from "./config-setting.js";
import { SETTINGS } from "./config-settings.js";

/** What `npm run rotate-key` reads: the database, the key in use and the one to move to. */
const ROTATION_SETTINGS = {
  TOKEN_ENCRYPTION_KEY: { ...SETTINGS.TOKEN_ENCRYPTION_KEY, required: true },
  NEW_TOKEN_ENCRYPTION_KEY: { ...SETTINGS.TOKEN_ENCRYPTION_KEY, required: true },
  DATABASE_PATH: SETTINGS.DATABASE_PATH,
  DATABASE_URL: SETTINGS.DATABASE_URL,
} satisfies Record<string, Setting<unknown>>;

export interface RotationConfig {
  /** The SQLite file, or PostgreSQL when `url` is set. */
  database: { path: string; url: string | undefined };
  currentKey: Buffer;
  newKey: Buffer;
}

/** The rotation's settings (rotate-key-cli.ts); throws ConfigError naming the variable. */
export function readRotationConfig(env: Env): RotationConfig {
  const v = readSettings(env, ROTATION_SETTINGS);
  if (v.TOKEN_ENCRYPTION_KEY.equals(v.NEW_TOKEN_ENCRYPTION_KEY)) {
    throw new ConfigError(
      "NEW_TOKEN_ENCRYPTION_KEY is the same key as TOKEN_ENCRYPTION_KEY: generate a new one.",
    );
  }
  return {
    database: { path: v.DATABASE_PATH, url: v.DATABASE_URL },
    currentKey: v.TOKEN_ENCRYPTION_KEY,
    newKey: v.NEW_TOKEN_ENCRYPTION_KEY,
  };
}
