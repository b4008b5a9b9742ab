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
): Promise<Stores> {
  return where.url === undefined
    ? openSqliteStores(where.path, now)
    : openPostgresStores(where.url, now);
}
