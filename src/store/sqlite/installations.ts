import type { Immediate } from "../immediate.js";
import { type InstallationRow as Row, toInstallation } from "../rows.js";
import type {
  InstallationKey,
  InstallationQuery,
  InstallationStore,
  StoredInstallation,
} from "../stores.js";
import type { Db } from "./db.js";

/** The installations in SQLite, their bot tokens sealed: the file never holds one in clear. */
export class SqliteInstallationStore implements Immediate<InstallationStore> {
  private readonly dropTeamStmt;
  private readonly putStmt;
  private readonly getStmt;
  private readonly findStmt;
  private readonly placeStmt;
  private readonly workspacesStmt;
  private readonly removeStmt;
  private readonly listStmt;
  private readonly resealStmt;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.dropTeamStmt = db.prepare("DELETE FROM installations WHERE team = ? AND team <> ''");
    this.putStmt = db.prepare(
      `INSERT INTO installations (enterprise, team, team_name, enterprise_name, app_id,
         bot_user_id, bot_id, bot_scopes, sealed_bot_token, installer_user_id, installed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (enterprise, team) DO UPDATE SET
         team_name = excluded.team_name, enterprise_name = excluded.enterprise_name,
         app_id = excluded.app_id, bot_user_id = excluded.bot_user_id, bot_id = excluded.bot_id,
         bot_scopes = excluded.bot_scopes, sealed_bot_token = excluded.sealed_bot_token,
         installer_user_id = excluded.installer_user_id, installed_at = excluded.installed_at`,
    );
    this.getStmt = db.prepare<[string, string], Row>(
      "SELECT * FROM installations WHERE enterprise = ? AND team = ?",
    );
    // The workspace's own installation first, else its org's org-wide one (the org asked
    // for, else the one recorded for the workspace).
    this.findStmt = db.prepare<{ team: string; enterprise: string }, Row>(
      `SELECT * FROM installations
       WHERE (team = :team AND team <> '')
          OR (team = '' AND enterprise <> '' AND enterprise = COALESCE(NULLIF(:enterprise, ''),
                (SELECT enterprise FROM workspace_orgs WHERE team = :team)))
       ORDER BY team = '' LIMIT 1`,
    );
    this.placeStmt = db.prepare(
      `INSERT INTO workspace_orgs (team, enterprise) VALUES (?, ?)
       ON CONFLICT (team) DO UPDATE SET enterprise = excluded.enterprise`,
    );
    this.workspacesStmt = db.prepare<[string], { team: string }>(
      "SELECT team FROM workspace_orgs WHERE enterprise = ?",
    );
    this.removeStmt = db.prepare("DELETE FROM installations WHERE enterprise = ? AND team = ?");
    this.listStmt = db.prepare<[], Row>(
      "SELECT * FROM installations ORDER BY installed_at, enterprise, team",
    );
    this.resealStmt = db.prepare(
      "UPDATE installations SET sealed_bot_token = ? WHERE enterprise = ? AND team = ?",
    );
  }

  put(installation: Omit<StoredInstallation, "installedAt">): StoredInstallation {
    const i = installation;
    this.db.transaction(() => {
      this.dropTeamStmt.run(i.team);
      this.putStmt.run(
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
      );
    })();
    return toInstallation(this.getStmt.get(i.enterprise, i.team) as Row);
  }

  find({ team, enterprise }: InstallationQuery): StoredInstallation | undefined {
    const row = this.findStmt.get({ team: team ?? "", enterprise: enterprise ?? "" });
    return row && toInstallation(row);
  }

  placeWorkspace(team: string, enterprise: string): void {
    this.placeStmt.run(team, enterprise);
  }

  workspacesOf(enterprise: string): string[] {
    return this.workspacesStmt.all(enterprise).map((r) => r.team);
  }

  remove(key: InstallationKey): boolean {
    return this.removeStmt.run(key.enterprise, key.team).changes > 0;
  }

  list(): StoredInstallation[] {
    return this.listStmt.all().map(toInstallation);
  }

  reseal(rows: readonly (InstallationKey & { sealedBotToken: Buffer })[]): void {
    this.db.transaction(() => {
      for (const row of rows) this.resealStmt.run(row.sealedBotToken, row.enterprise, row.team);
    })();
  }
}
