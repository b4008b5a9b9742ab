import { openPostgresStores } from "./postgres/open.js";
import { openSqliteStores } from "./sqlite/open.js";
import type { Stores } from "./stores.js";

/** Where the stores are: PostgreSQL when a URL is given (DATABASE_URL), else the SQLite file. */
export interface StoreLocation {
  path: string;
  url: string | undefined;
}

export async function openStores(
  where: StoreLocation,
  now: () => number = Date.now,
  /** A bot opens them (postgres/open.ts: the replica lock); false for npm run rotate-key. */
  bot = true,
): Promise<Stores> {
  if (where.url === undefined) return openSqliteStores(where.path, now);
  const stores = openPostgresStores(where.url, now, { bot });
  try {
    await stores.opened;
  } catch (error) {
    await stores.close();
    throw error;
  }
  return stores;
}
