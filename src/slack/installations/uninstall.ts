import { z } from "zod";
import type { Logger } from "../../logger.js";
import type { BoltApp } from "./app.js";
import type { Workspaces } from "./installation.js";
import { type Installations, NotInstalled } from "./installations.js";

export interface UninstallDeps {
  installations: Pick<Installations, "find" | "remove">;
  workspaces: Pick<Workspaces, "forget">;
  /** Stops a workspace's turns where they are (bridge.abandon), quietly. */
  abandon: (team: string, gone: Error) => Promise<number>;
  logger: Logger;
}

/** Where the event comes from, as Bolt's context tells it (no `authorize` runs for these). */
interface Place {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}

const TokensRevoked = z.looseObject({
  tokens: z.looseObject({ bot: z.array(z.string()).optional() }),
});

/**
 * Many workspaces: a workspace that removes the app (`app_uninstalled`), or whose bot token
 * is revoked (`tokens_revoked` naming the bot), loses its installation. Its live answers stop
 * quietly and the bot says nothing more there: with no installation, every later event of
 * the workspace fails Bolt's `authorize` and reaches no listener, and every call there fails
 * before it leaves.
 */
export function registerUninstall(app: BoltApp, deps: UninstallDeps): void {
  const forget = async (place: Place, why: string) => {
    const team = place.teamId;
    // An org-wide installation is the org's; a workspace's is found by its team alone.
    const found = place.isEnterpriseInstall
      ? await deps.installations.find({ enterprise: place.enterpriseId })
      : await deps.installations.find({ team });
    const removed = found !== undefined && (await deps.installations.remove(found.key));
    // An org-wide installation's answers stop in every workspace of the org known here.
    const teams = new Set(found ? await deps.workspaces.forget(found.key) : []);
    if (team) {
      await deps.workspaces.forget({ enterprise: place.enterpriseId ?? "", team });
      teams.add(team);
    }
    let stopped = 0;
    for (const each of teams) {
      stopped += await deps.abandon(each, new NotInstalled({ team: each }));
    }
    deps.logger.info(
      { team, enterprise: place.enterpriseId, removed, workspaces: teams.size, stopped, why },
      "an installation was removed",
    );
  };

  app.event("app_uninstalled", async ({ context }) => {
    await forget(context, "app_uninstalled");
  });

  app.event("tokens_revoked", async ({ event, context }) => {
    const parsed = TokensRevoked.safeParse(event);
    const bots = parsed.success ? (parsed.data.tokens.bot ?? []) : [];
    const installed = context.isEnterpriseInstall
      ? await deps.installations.find({ enterprise: context.enterpriseId })
      : await deps.installations.find({ team: context.teamId });
    // People's own tokens may be revoked too; only the bot's ends the installation.
    if (installed !== undefined && bots.includes(installed.botUserId)) {
      await forget(context, "tokens_revoked");
    }
  });
}
