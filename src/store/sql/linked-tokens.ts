import type { Kysely } from "kysely";
import { toToken } from "../rows.js";
import type { LinkedTokenStore, SealedToken } from "../stores.js";
import { byteOrder } from "./order.js";
import type { Schema } from "./schema.js";

/**
 * People's linked tokens in SQL (SQLite or PostgreSQL), sealed: the database never holds a
 * token in clear. `db` may be a transaction (Stores.exclusively: key rotation).
 */
export class SqlLinkedTokenStore implements LinkedTokenStore {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly now: () => number = Date.now,
  ) {}

  async get(team: string, user: string): Promise<SealedToken | undefined> {
    const row = await this.db
      .selectFrom("linked_tokens")
      .selectAll()
      .where("team", "=", team)
      .where("user", "=", user)
      .executeTakeFirst();
    return row && toToken(row);
  }

  async put(team: string, user: string, sealed: Buffer): Promise<SealedToken> {
    const row = await this.db
      .insertInto("linked_tokens")
      .values({ team, user, sealed, linked_at: this.now() })
      .onConflict((conflict) =>
        conflict.columns(["team", "user"]).doUpdateSet((eb) => ({
          sealed: eb.ref("excluded.sealed"),
          linked_at: eb.ref("excluded.linked_at"),
        })),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return toToken(row);
  }

  async remove(team: string, user: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("linked_tokens")
      .where("team", "=", team)
      .where("user", "=", user)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Oldest link first, then by workspace and person in byte order (as both databases sort). */
  async all(): Promise<SealedToken[]> {
    const rows = await this.db.selectFrom("linked_tokens").selectAll().execute();
    return rows
      .map(toToken)
      .sort(
        (a, b) => a.linkedAt - b.linkedAt || byteOrder(a.team, b.team) || byteOrder(a.user, b.user),
      );
  }

  /** All or none: in the transaction it is given, else in one of its own. */
  async reseal(rows: readonly { team: string; user: string; sealed: Buffer }[]): Promise<void> {
    const write = async (db: Kysely<Schema>) => {
      for (const row of rows) {
        await db
          .updateTable("linked_tokens")
          .set({ sealed: row.sealed })
          .where("team", "=", row.team)
          .where("user", "=", row.user)
          .execute();
      }
    };
    if (this.db.isTransaction) await write(this.db);
    else await this.db.transaction().execute(write);
  }
}
