import type { Immediate } from "../immediate.js";
import { type InstallationRow as Row, toInstallation } from "../rows.js";
import type {
  InstallationKey,
  InstallationQuery,
  InstallationStore,
  StoredInstallation,
} from "../stores.js";
import type { SyncPostgres } from "./sync-client.js";

/** The installations in PostgreSQL, their bot tokens sealed: the database never holds one in clear. */
export class PostgresInstallationStore implements Immediate<InstallationStore> {
  constructor(
    private readonly db: SyncPostgres,
    private readonly now: () => number = Date.now,
  ) {}

  put(installation: Omit<StoredInstallation, "installedAt">): StoredInstallation {
    const i = installation;
    return this.db.transaction(() => {
      // A workspace moved into an org-wide install (or out of one) keeps one installation.
      this.db.run("DELETE FROM installations WHERE team = $1 AND team <> ''", [i.team]);
      const row = this.db.first<Row>(
        `INSERT INTO installations (enterprise, team, team_name, enterprise_name, app_id,
           bot_user_id, bot_id, bot_scopes, sealed_bot_token, installer_user_id, installed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (enterprise, team) DO UPDATE SET
           team_name = excluded.team_name, enterprise_name = excluded.enterprise_name,
           app_id = excluded.app_id, bot_user_id = excluded.bot_user_id, bot_id = excluded.bot_id,
           bot_scopes = excluded.bot_scopes, sealed_bot_token = excluded.sealed_bot_token,
           installer_user_id = excluded.installer_user_id, installed_at = excluded.installed_at
         RETURNING *`,
        [
          i.enterprise,
          i.team,
          i.teamName,
          i.enterpriseName,
          i.appId,
          i.botUserId,
          i.botId,
          i.botScopes.join(","),
          i.sealedBotToken,
          i.installerUserId,
          this.now(),
        ],
      );
      return toInstallation(row as Row);
    });
  }

  find({ team, enterprise }: InstallationQuery): StoredInstallation | undefined {
    // The workspace's own installation first, else its org's org-wide one (the org asked
    // for, else the one recorded for the workspace).
    const row = this.db.first<Row>(
      `SELECT * FROM installations
       WHERE (team = $1 AND team <> '')
          OR (team = '' AND enterprise <> '' AND enterprise = COALESCE(NULLIF($2, ''),
                (SELECT enterprise FROM workspace_orgs WHERE team = $1)))
       ORDER BY team = '' LIMIT 1`,
      [team ?? "", enterprise ?? ""],
    );
    return row && toInstallation(row);
  }

  placeWorkspace(team: string, enterprise: string): void {
    this.db.run(
      `INSERT INTO workspace_orgs (team, enterprise) VALUES ($1, $2)
       ON CONFLICT (team) DO UPDATE SET enterprise = excluded.enterprise`,
      [team, enterprise],
    );
  }

  workspacesOf(enterprise: string): string[] {
    return this.db
      .rows<{ team: string }>("SELECT team FROM workspace_orgs WHERE enterprise = $1", [enterprise])
      .map((r) => r.team);
  }

  remove(key: InstallationKey): boolean {
    const sql = "DELETE FROM installations WHERE enterprise = $1 AND team = $2";
    return this.db.run(sql, [key.enterprise, key.team]) > 0;
  }

  list(): StoredInstallation[] {
    return this.db
      .rows<Row>(
        `SELECT * FROM installations
         ORDER BY installed_at, enterprise COLLATE "C", team COLLATE "C"`,
      )
      .map(toInstallation);
  }

  reseal(rows: readonly (InstallationKey & { sealedBotToken: Buffer })[]): void {
    this.db.transaction(() => {
      for (const row of rows) {
        this.db.run(
          "UPDATE installations SET sealed_bot_token = $1 WHERE enterprise = $2 AND team = $3",
          [row.sealedBotToken, row.enterprise, row.team],
        );
      }
    });
  }
}
