/**
 * The settings of many workspaces (contract: SLACK_CLIENT_ID, SLACK_CLIENT_SECRET,
 * SLACK_STATE_SECRET): with all three the app serves Slack's OAuth install flow and keeps an
 * installation per workspace; with none it runs on SLACK_BOT_TOKEN in one workspace. The
 * install page is public, so ALLOWED_TEAM_IDS is then required: it says who may install.
 * Read by `config.ts` (the only reader of the environment), kept apart because it is one
 * concept.
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

type Env = Record<string, string | undefined>;

/** A setting that cannot be used; config.ts turns it into its ConfigError. */
export class OAuthSettingError extends Error {}

const NAMES = ["SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_STATE_SECRET"] as const;

/** Shortest state secret accepted: it signs every install's state. */
const MIN_STATE_SECRET_CHARS = 16;

function optional(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === undefined || raw === "" ? undefined : raw;
}

/** Whether any of the three is set: then SLACK_BOT_TOKEN is optional. */
export function wantsOAuth(env: Env): boolean {
  return NAMES.some((name) => optional(env, name) !== undefined);
}

/**
 * The OAuth settings: all three variables or none (undefined). Many workspaces need
 * TOKEN_ENCRYPTION_KEY (`hasKey`): their bot tokens are kept only encrypted; and
 * ALLOWED_TEAM_IDS (`allowedTeamIds`, as config.ts read it): without a list of who may install,
 * anyone who finds the install page could install the app and ask on the operator's service
 * token.
 */
export function readOAuthConfig(
  env: Env,
  hasKey: boolean,
  allowedTeamIds: readonly string[] | undefined,
): OAuthConfig | undefined {
  const [clientId, clientSecret, stateSecret] = NAMES.map((name) => optional(env, name));
  const missing = NAMES.filter((name) => optional(env, name) === undefined);
  if (missing.length === NAMES.length) return undefined;
  if (clientId === undefined || clientSecret === undefined || stateSecret === undefined) {
    throw new OAuthSettingError(
      `${list(missing)} ${missing.length === 1 ? "is" : "are"} required with ${list(NAMES.filter((n) => !missing.includes(n)))}: installing the app in many workspaces takes all three (or none, for one workspace on SLACK_BOT_TOKEN).`,
    );
  }
  if (/\s/.test(clientId) || /\s/.test(clientSecret)) {
    throw new OAuthSettingError(
      `${/\s/.test(clientId) ? "SLACK_CLIENT_ID" : "SLACK_CLIENT_SECRET"} is malformed: it must not contain spaces.`,
    );
  }
  if (stateSecret.length < MIN_STATE_SECRET_CHARS) {
    throw new OAuthSettingError(
      `SLACK_STATE_SECRET is malformed: it must be at least ${MIN_STATE_SECRET_CHARS} random characters (e.g. the output of \`openssl rand -base64 32\`).`,
    );
  }
  if (!hasKey) {
    throw new OAuthSettingError(
      "SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET need TOKEN_ENCRYPTION_KEY: each workspace's bot token is kept only encrypted.",
    );
  }
  if (allowedTeamIds === undefined) {
    throw new OAuthSettingError(
      "ALLOWED_TEAM_IDS is required with SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET: it names the workspaces (T…) and Enterprise orgs (E…) that may install the app; an install by any other is refused.",
    );
  }
  return { clientId, clientSecret, stateSecret, allowedTeamIds };
}

/** "A", "A and B", "A, B and C". */
function list(names: readonly string[]): string {
  return names.length <= 1
    ? (names[0] ?? "")
    : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}
