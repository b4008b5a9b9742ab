import { z } from "zod";
import { listed } from "./config-kinds.js";
import { ConfigError, type Presence, type Requirement } from "./config-setting.js";

/**
 * Many workspaces (contract: SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET): with
 * all three the app serves Slack's OAuth install flow and keeps an installation per workspace;
 * with none it runs on SLACK_BOT_TOKEN in one workspace.
 */

/** The Slack app's OAuth credentials: the app may be installed in many workspaces. */
export interface OAuthConfig {
  clientId: string;
  clientSecret: string;
  /** Signs the install flow's `state` (against forged redirects). */
  stateSecret: string;
  /**
   * The workspace (`T…`) and Enterprise org (`E…`) ids that may install the app
   * (ALLOWED_TEAM_IDS, required here): an install by anyone else is refused, its token never kept.
   */
  allowedTeamIds: readonly string[];
}

const NAMES = ["SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_STATE_SECRET"] as const;

/** Whether any of the three is set: then SLACK_BOT_TOKEN is optional. */
const wantsOAuth = (isSet: Presence) => NAMES.some(isSet);

/** SLACK_BOT_TOKEN: required for one workspace, optional with the OAuth settings. */
export const withoutOAuth: Requirement = { when: (isSet) => !wantsOAuth(isSet) };

/** Each of the three: required with the others, all three or none. */
export const withTheOtherOAuthSettings: Requirement = {
  when: wantsOAuth,
  missing: (isSet) => {
    const missing = NAMES.filter((name) => !isSet(name));
    return `${listed(missing)} ${missing.length === 1 ? "is" : "are"} required with ${listed(NAMES.filter(isSet))}: installing the app in many workspaces takes all three (or none, for one workspace on SLACK_BOT_TOKEN).`;
  },
};

/** Shortest state secret accepted: it signs every install's state. */
export const stateSecret = () =>
  z.string().min(16, {
    message:
      "it must be at least 16 random characters (e.g. the output of `openssl rand -base64 32`)",
  });

/**
 * The OAuth settings, read: undefined without them. Many workspaces need TOKEN_ENCRYPTION_KEY
 * (`hasKey`): their bot tokens are kept only encrypted; and ALLOWED_TEAM_IDS: without a list
 * of who may install, anyone who finds the install page could install the app and ask on the
 * operator's service token.
 */
export function oauthConfig(
  clientId: string | undefined,
  clientSecret: string | undefined,
  stateSecret: string | undefined,
  hasKey: boolean,
  allowedTeamIds: readonly string[] | undefined,
): OAuthConfig | undefined {
  // withTheOtherOAuthSettings made it all three or none.
  if (clientId === undefined || clientSecret === undefined || stateSecret === undefined) {
    return undefined;
  }
  if (!hasKey) {
    throw new ConfigError(
      `${listed(NAMES)} need TOKEN_ENCRYPTION_KEY: each workspace's bot token is kept only encrypted.`,
    );
  }
  if (allowedTeamIds === undefined) {
    throw new ConfigError(
      `ALLOWED_TEAM_IDS is required with ${listed(NAMES)}: it names the workspaces (T…) and Enterprise orgs (E…) that may install the app; an install by any other is refused.`,
    );
  }
  return { clientId, clientSecret, stateSecret, allowedTeamIds };
}
