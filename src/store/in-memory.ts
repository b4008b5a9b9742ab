import { openSqliteStores } from "./sqlite/open.js";
import type { Stores } from "./stores.js";

/**
 * Every store in an SQLite database held in memory, gone when it is closed (or the process
 * ends): for fast tests of the core. The same code as the file's, so no second
 * implementation of the stores has to be kept in step with the first.
 */
export function memoryStores(now: () => number = Date.now): Stores {
  return openSqliteStores(":memory:", now);
}
