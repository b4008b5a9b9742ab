import type { HTTPReceiverOptions, Installation } from "@slack/bolt";

/**
 * Who may install the app (many workspaces): the workspaces and Enterprise orgs of
 * ALLOWED_TEAM_IDS. The install page is public and the app distributed, so without this rule
 * any workspace could install it and ask on the operator's service token. The rule runs in
 * Bolt's `afterInstallation` hook: after Slack exchanged the code (the installer is known only
 * then), before the installation store is called, so a refused installation's token is never
 * kept. It is revoked at once, and the person sees a page saying why and whom to ask.
 */

/** Bolt's hooks around the install flow's code exchange (@slack/oauth's CallbackOptions). */
export type InstallCallbacks = NonNullable<
  NonNullable<HTTPReceiverOptions["installerOptions"]>["callbackOptions"]
>;

/** What the rule reads of an installation. */
export interface InstallingParty {
  team?: { id: string; name?: string | undefined } | undefined;
  enterprise?: { id: string; name?: string | undefined } | undefined;
  isEnterpriseInstall?: boolean | undefined;
}

export interface InstallRuleOptions {
  /** ALLOWED_TEAM_IDS: workspace (`T…`) and Enterprise org (`E…`) ids. */
  allowedTeamIds: readonly string[];
  /** auth.revoke with the token: a refused installation is not left able to call Slack. */
  revoke: (token: string) => Promise<void>;
  /** Told each refused token the moment it is held, so the log scrubber masks it. */
  onSecret: (token: string) => void;
  logger: {
    info(fields: Record<string, unknown>, message: string): void;
    warn(fields: Record<string, unknown>, message: string): void;
  };
}

/**
 * A workspace may install when its id or its org's id is listed (a listed org's people are
 * answered, whichever of its workspaces they are in); an org-wide install only when its
 * org's id is listed, since it serves every workspace of the org.
 */
export function mayInstall(party: InstallingParty, allowed: readonly string[]): boolean {
  const org = party.enterprise?.id;
  if (org !== undefined && allowed.includes(org)) return true;
  const team = party.isEnterpriseInstall === true ? undefined : party.team?.id;
  return team !== undefined && allowed.includes(team);
}

/** The install hook that refuses what `mayInstall` does not allow. */
export function installRule(
  options: InstallRuleOptions,
): Pick<InstallCallbacks, "afterInstallation"> {
  return {
    afterInstallation: async (installation, _install, _req, res) => {
      if (mayInstall(installation, options.allowedTeamIds)) return true;
      const tokens = [installation.bot?.token, installation.user.token].filter(
        (token): token is string => typeof token === "string" && token !== "",
      );
      for (const token of tokens) options.onSecret(token);
      const who = refusedParty(installation);
      options.logger.warn(
        { team: installation.team?.id, enterprise: installation.enterprise?.id },
        "an install by a workspace or org not in ALLOWED_TEAM_IDS was refused; nothing was kept",
      );
      for (const token of tokens) {
        try {
          await options.revoke(token);
        } catch (error) {
          options.logger.warn(
            { err: error instanceof Error ? error.message : String(error) },
            "could not revoke the token of a refused install",
          );
        }
      }
      res.writeHead(403, { "Content-Type": "text/html; charset=utf-8" });
      res.end(refusalPage(who));
      return false;
    },
  };
}

/** The workspace, or the org of an org-wide install, that was refused: its id and its name. */
function refusedParty(installation: Installation | InstallingParty): { id: string; name: string } {
  const orgWide = installation.isEnterpriseInstall === true;
  const place = (orgWide ? installation.enterprise : installation.team) ?? installation.enterprise;
  const id = place?.id ?? "unknown";
  return { id, name: place?.name?.trim() || id };
}

/** What the person who tried to install sees. */
export function refusalPage(who: { id: string; name: string }): string {
  const name = escapeHtml(who.name);
  const id = escapeHtml(who.id);
  return `<!doctype html>
<html>
<head><meta charset="utf-8"><title>Not installed</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto; padding: 0 1em">
<h1>This app can't be installed in ${name}</h1>
<p>It is only for the workspaces and organisations its operator has allowed, and ${name} (<code>${id}</code>) is not one of them. Nothing was installed and no access was kept.</p>
<p>If ${name} should have it, ask whoever runs this app (the person who gave you the install link) to add <code>${id}</code> to its <code>ALLOWED_TEAM_IDS</code>, then install again.</p>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}
