import type { Immediate } from "../immediate.js";
import { type LinkedTokenRow as Row, toToken } from "../rows.js";
import type { LinkedTokenStore, SealedToken } from "../stores.js";
import type { Db } from "./db.js";

/** The linked tokens in SQLite, sealed: the file never holds a token in clear. */
export class SqliteLinkedTokenStore implements Immediate<LinkedTokenStore> {
  private readonly getStmt;
  private readonly putStmt;
  private readonly removeStmt;
  private readonly allStmt;
  private readonly resealStmt;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.getStmt = db.prepare<[string, string], Row>(
      "SELECT * FROM linked_tokens WHERE team = ? AND user = ?",
    );
    this.putStmt = db.prepare(
      `INSERT INTO linked_tokens (team, user, sealed, linked_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (team, user) DO UPDATE SET sealed = excluded.sealed, linked_at = excluded.linked_at`,
    );
    this.removeStmt = db.prepare("DELETE FROM linked_tokens WHERE team = ? AND user = ?");
    this.allStmt = db.prepare<[], Row>(
      "SELECT * FROM linked_tokens ORDER BY linked_at, team, user",
    );
    this.resealStmt = db.prepare("UPDATE linked_tokens SET sealed = ? WHERE team = ? AND user = ?");
  }

  get(team: string, user: string): SealedToken | undefined {
    const row = this.getStmt.get(team, user);
    return row && toToken(row);
  }

  put(team: string, user: string, sealed: Buffer): SealedToken {
    this.putStmt.run(team, user, sealed, this.now());
    return this.get(team, user) as SealedToken;
  }

  remove(team: string, user: string): boolean {
    return this.removeStmt.run(team, user).changes > 0;
  }

  all(): SealedToken[] {
    return this.allStmt.all().map(toToken);
  }

  reseal(rows: readonly { team: string; user: string; sealed: Buffer }[]): void {
    this.db.transaction(() => {
      for (const row of rows) this.resealStmt.run(row.sealed, row.team, row.user);
    })();
  }
}
