import { readRotationConfig } from "../config-rotation.js";
import { ConfigError } from "../config-setting.js";
import { openStores } from "../store/open.js";
import { DatabaseInUse, type Stores } from "../store/stores.js";
import { RotationRefused, rotateAllKeys } from "./key-rotation.js";

/**
 * The key rotation of `npm run rotate-key`: seals every linked token, and every installation's
 * bot token, again under NEW_TOKEN_ENCRYPTION_KEY, in one transaction. Run it while the bot is
 * stopped, then start the bot with TOKEN_ENCRYPTION_KEY set to the new key. A bot still running
 * refuses it: on SQLite the file's lock (the open fails, "database is locked"), on PostgreSQL
 * any replica's connection or live lease (DatabaseInUse). Prints counts only, never a token or
 * a key.
 */
export async function runRotation(env: Record<string, string | undefined>): Promise<{
  code: number;
  line: string;
}> {
  let settings: ReturnType<typeof readRotationConfig>;
  try {
    settings = readRotationConfig(env);
  } catch (error) {
    if (error instanceof ConfigError)
      return { code: 2, line: `Configuration error: ${error.message}` };
    throw error;
  }
  let stores: Stores;
  try {
    // Not as a bot: only bots' connections keep the rotation from running.
    stores = await openStores(settings.database, Date.now, false);
  } catch (error) {
    return { code: 1, line: `Key rotation failed: ${(error as Error).message}` };
  }
  try {
    const { linked, bots } = await rotateAllKeys(stores, settings.currentKey, settings.newKey);
    const installations =
      bots.rotated + bots.already === 0
        ? ""
        : ` and ${bots.rotated} installation bot token(s) (${bots.already} already were)`;
    return {
      code: 0,
      line: `Sealed ${linked.rotated} linked token(s) under the new key (${linked.already} already were)${installations}. Now set TOKEN_ENCRYPTION_KEY to the new key and start the bot.`,
    };
  } catch (error) {
    if (error instanceof RotationRefused)
      return { code: 1, line: `Key rotation refused: ${error.message}.` };
    if (error instanceof DatabaseInUse)
      return { code: 1, line: `Key rotation refused: ${error.message}. Nothing was changed.` };
    throw error;
  } finally {
    await stores.close();
  }
}
