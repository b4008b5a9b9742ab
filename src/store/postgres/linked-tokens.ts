import type { Immediate } from "../immediate.js";
import { type LinkedTokenRow as Row, toToken } from "../rows.js";
import type { LinkedTokenStore, SealedToken } from "../stores.js";
import type { SyncPostgres } from "./sync-client.js";

const COLUMNS = 'team, "user", sealed, linked_at';

/** The linked tokens in PostgreSQL (BYTEA), sealed: the database never holds a token in clear. */
export class PostgresLinkedTokenStore implements Immediate<LinkedTokenStore> {
  constructor(
    private readonly db: SyncPostgres,
    private readonly now: () => number = Date.now,
  ) {}

  get(team: string, user: string): SealedToken | undefined {
    const row = this.db.first<Row>(
      `SELECT ${COLUMNS} FROM linked_tokens WHERE team = $1 AND "user" = $2`,
      [team, user],
    );
    return row && toToken(row);
  }

  put(team: string, user: string, sealed: Buffer): SealedToken {
    const row = this.db.first<Row>(
      `INSERT INTO linked_tokens (team, "user", sealed, linked_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (team, "user") DO UPDATE SET sealed = excluded.sealed,
         linked_at = excluded.linked_at
       RETURNING ${COLUMNS}`,
      [team, user, sealed, this.now()],
    );
    return toToken(row as Row);
  }

  remove(team: string, user: string): boolean {
    return (
      this.db.run('DELETE FROM linked_tokens WHERE team = $1 AND "user" = $2', [team, user]) > 0
    );
  }

  all(): SealedToken[] {
    return this.db
      .rows<Row>(
        `SELECT ${COLUMNS} FROM linked_tokens ORDER BY linked_at, team COLLATE "C", "user" COLLATE "C"`,
      )
      .map(toToken);
  }

  reseal(rows: readonly { team: string; user: string; sealed: Buffer }[]): void {
    this.db.transaction(() => {
      for (const row of rows) {
        this.db.run('UPDATE linked_tokens SET sealed = $1 WHERE team = $2 AND "user" = $3', [
          row.sealed,
          row.team,
          row.user,
        ]);
      }
    });
  }
}
