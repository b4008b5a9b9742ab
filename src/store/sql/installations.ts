import { type Kysely, sql } from "kysely";
import { toInstallation } from "../rows.js";
import type {
  InstallationKey,
  InstallationQuery,
  InstallationStore,
  StoredInstallation,
} from "../stores.js";
import { byteOrder } from "./order.js";
import type { Schema } from "./schema.js";

/**
 * The installations in SQL (SQLite or PostgreSQL), their bot tokens sealed: the database never
 * holds one in clear. `db` may be a transaction (Stores.exclusively: key rotation).
 */
export class SqlInstallationStore implements InstallationStore {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly now: () => number = Date.now,
  ) {}

  /** One transaction: a workspace moved into an org-wide install (or out of one) keeps one. */
  put(installation: Omit<StoredInstallation, "installedAt">): Promise<StoredInstallation> {
    const i = installation;
    const row = {
      enterprise: i.enterprise,
      team: i.team,
      team_name: i.teamName,
      enterprise_name: i.enterpriseName,
      app_id: i.appId,
      bot_user_id: i.botUserId,
      bot_id: i.botId,
      bot_scopes: i.botScopes.join(","),
      sealed_bot_token: i.sealedBotToken,
      installer_user_id: i.installerUserId,
      installed_at: this.now(),
    };
    const { enterprise: _e, team: _t, ...replaced } = row;
    return this.inTransaction(async (db) => {
      await db
        .deleteFrom("installations")
        .where("team", "=", i.team)
        .where("team", "<>", "")
        .execute();
      const stored = await db
        .insertInto("installations")
        .values(row)
        .onConflict((conflict) => conflict.columns(["enterprise", "team"]).doUpdateSet(replaced))
        .returningAll()
        .executeTakeFirstOrThrow();
      return toInstallation(stored);
    });
  }

  /**
   * The workspace's own installation first, else its org's org-wide one (the org asked for,
   * else the one recorded for the workspace).
   */
  async find({ team, enterprise }: InstallationQuery): Promise<StoredInstallation | undefined> {
    const t = team ?? "";
    const recorded = this.db
      .selectFrom("workspace_orgs")
      .select("enterprise")
      .where("team", "=", t);
    const row = await this.db
      .selectFrom("installations")
      .selectAll()
      .where((eb) =>
        eb.or([
          eb.and([eb("team", "=", t), eb("team", "<>", "")]),
          eb.and([
            eb("team", "=", ""),
            eb("enterprise", "<>", ""),
            eb(
              "enterprise",
              "=",
              eb.fn.coalesce(sql<string>`NULLIF(${enterprise ?? ""}, '')`, recorded),
            ),
          ]),
        ]),
      )
      .orderBy(sql`team = ''`)
      .limit(1)
      .executeTakeFirst();
    return row && toInstallation(row);
  }

  async placeWorkspace(team: string, enterprise: string): Promise<void> {
    await this.db
      .insertInto("workspace_orgs")
      .values({ team, enterprise })
      .onConflict((conflict) => conflict.column("team").doUpdateSet({ enterprise }))
      .execute();
  }

  async workspacesOf(enterprise: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom("workspace_orgs")
      .select("team")
      .where("enterprise", "=", enterprise)
      .execute();
    return rows.map((r) => r.team);
  }

  async remove(key: InstallationKey): Promise<boolean> {
    const result = await this.db
      .deleteFrom("installations")
      .where("enterprise", "=", key.enterprise)
      .where("team", "=", key.team)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** Oldest install first, then by org and workspace in byte order (as both databases sort). */
  async list(): Promise<StoredInstallation[]> {
    const rows = await this.db.selectFrom("installations").selectAll().execute();
    return rows
      .map(toInstallation)
      .sort(
        (a, b) =>
          a.installedAt - b.installedAt ||
          byteOrder(a.enterprise, b.enterprise) ||
          byteOrder(a.team, b.team),
      );
  }

  /** All or none. */
  async reseal(rows: readonly (InstallationKey & { sealedBotToken: Buffer })[]): Promise<void> {
    await this.inTransaction(async (db) => {
      for (const row of rows) {
        await db
          .updateTable("installations")
          .set({ sealed_bot_token: row.sealedBotToken })
          .where("enterprise", "=", row.enterprise)
          .where("team", "=", row.team)
          .execute();
      }
    });
  }

  /** `work` in the transaction this store was given, else in one of its own. */
  private inTransaction<T>(work: (db: Kysely<Schema>) => Promise<T>): Promise<T> {
    return this.db.isTransaction ? work(this.db) : this.db.transaction().execute(work);
  }
}
