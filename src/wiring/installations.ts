import type { Config, OAuthConfig } from "../config.js";
import { type Logger, learnSecret } from "../logger.js";
import { type InstallCallbacks, installRule } from "../slack/installations/install-rule.js";
import { Installations } from "../slack/installations/installations.js";
import type { Stores } from "../store/stores.js";

/**
 * The installations of many workspaces (SLACK_CLIENT_ID…), sealed under
 * TOKEN_ENCRYPTION_KEY; undefined in one workspace on SLACK_BOT_TOKEN.
 */
export function wireInstallations(
  config: Config,
  stores: Stores,
  logger: Logger,
): Installations | undefined {
  const key = config.people.encryptionKey;
  // config.ts refuses OAuth without the key; both are checked again so a type cannot lie.
  if (config.slack.oauth === undefined || key === undefined) return undefined;
  return new Installations({
    store: stores.installations,
    key,
    onSecret: (token) => learnSecret(logger, token),
    onBroken: ({ enterprise, team }) =>
      logger.warn(
        { enterprise, team },
        "an installation's bot token does not open with TOKEN_ENCRYPTION_KEY; the workspace is treated as not installed",
      ),
  });
}

/**
 * Who may install the app: ALLOWED_TEAM_IDS (required with OAuth). `revoke` takes back a
 * refused installation's token (auth.revoke with it).
 */
export function wireInstallRule(
  oauth: OAuthConfig,
  logger: Logger,
  revoke: (token: string) => Promise<void>,
): InstallCallbacks {
  return installRule({
    allowedTeamIds: oauth.allowedTeamIds,
    revoke,
    onSecret: (token) => learnSecret(logger, token),
    logger,
  });
}
