import type { Immediate } from "../immediate.js";
import type { LinkedTokenStore, SealedToken } from "../stores.js";

/** Linked tokens in a Map, sealed as in SQLite: for fast tests of the core. */
export class MemoryLinkedTokenStore implements Immediate<LinkedTokenStore> {
  private readonly rows = new Map<string, SealedToken>();

  constructor(private readonly now: () => number = Date.now) {}

  get(team: string, user: string): SealedToken | undefined {
    const row = this.rows.get(keyOf(team, user));
    return row && { ...row, sealed: Buffer.from(row.sealed) };
  }

  put(team: string, user: string, sealed: Buffer): SealedToken {
    this.rows.set(keyOf(team, user), {
      team,
      user,
      sealed: Buffer.from(sealed),
      linkedAt: this.now(),
    });
    return this.get(team, user) as SealedToken;
  }

  remove(team: string, user: string): boolean {
    return this.rows.delete(keyOf(team, user));
  }

  all(): SealedToken[] {
    return [...this.rows.values()]
      .sort((a, b) => a.linkedAt - b.linkedAt)
      .map((row) => ({ ...row, sealed: Buffer.from(row.sealed) }));
  }

  reseal(rows: readonly { team: string; user: string; sealed: Buffer }[]): void {
    // A row unlinked meanwhile stays unlinked, as in SQLite's UPDATE.
    for (const row of rows) {
      const kept = this.rows.get(keyOf(row.team, row.user));
      if (kept) kept.sealed = Buffer.from(row.sealed);
    }
  }
}

const keyOf = (team: string, user: string) => `${team}\u0000${user}`;
