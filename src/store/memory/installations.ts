import type { Immediate } from "../immediate.js";
import type {
  InstallationKey,
  InstallationQuery,
  InstallationStore,
  StoredInstallation,
} from "../stores.js";

/** Installations in a Map, sealed as in SQLite: for fast tests of the core. */
export class MemoryInstallationStore implements Immediate<InstallationStore> {
  private readonly rows = new Map<string, StoredInstallation>();
  private readonly orgs = new Map<string, string>();

  constructor(private readonly now: () => number = Date.now) {}

  put(installation: Omit<StoredInstallation, "installedAt">): StoredInstallation {
    // A workspace has one installation, whichever org it was recorded under before.
    if (installation.team !== "") {
      for (const [key, row] of this.rows) if (row.team === installation.team) this.rows.delete(key);
    }
    const row = { ...copy(installation), installedAt: this.now() };
    this.rows.set(keyOf(row), row);
    return copy(row);
  }

  find({ team, enterprise }: InstallationQuery): StoredInstallation | undefined {
    const rows = [...this.rows.values()];
    const own = team ? rows.find((r) => r.team === team) : undefined;
    const org = enterprise || (team ? this.orgs.get(team) : undefined);
    const orgWide = org ? rows.find((r) => r.team === "" && r.enterprise === org) : undefined;
    const found = own ?? orgWide;
    return found && copy(found);
  }

  placeWorkspace(team: string, enterprise: string): void {
    this.orgs.set(team, enterprise);
  }

  workspacesOf(enterprise: string): string[] {
    return [...this.orgs].filter(([, org]) => org === enterprise).map(([team]) => team);
  }

  remove(key: InstallationKey): boolean {
    return this.rows.delete(keyOf(key));
  }

  list(): StoredInstallation[] {
    return [...this.rows.values()].sort((a, b) => a.installedAt - b.installedAt).map(copy);
  }

  reseal(rows: readonly (InstallationKey & { sealedBotToken: Buffer })[]): void {
    // One removed meanwhile stays removed, as in SQLite's UPDATE.
    for (const row of rows) {
      const kept = this.rows.get(keyOf(row));
      if (kept) kept.sealedBotToken = Buffer.from(row.sealedBotToken);
    }
  }
}

const keyOf = (key: InstallationKey) => `${key.enterprise}\u0000${key.team}`;

/** A copy the caller may change without changing the store. */
function copy<T extends Omit<StoredInstallation, "installedAt">>(row: T): T {
  return { ...row, botScopes: [...row.botScopes], sealedBotToken: Buffer.from(row.sealedBotToken) };
}
