/**
 * The OAuth install flow as a person's browser walks it against the bot and the fake Slack:
 * GET /slack/install (the bot redirects to Slack's authorize page with a state, and sets
 * that state in a cookie), the person approves (the fake hands out a code), and Slack sends
 * the browser back to /slack/oauth_redirect with the code and the state.
 */
import type { FakeSlack, NewInstall } from "../../tools/fake-slack/server.js";

export const CLIENT_ID = "1234.5678";
export const CLIENT_SECRET = "oauth-client-secret-abc123";
export const STATE_SECRET = "oauth-state-secret-0123456789";
/** 32 bytes, base64: installations' bot tokens are sealed under it. */
export const ENCRYPTION_KEY = Buffer.alloc(32, 42).toString("base64");

/** The workspaces and orgs the tests install in: ALLOWED_TEAM_IDS lets them install. */
export const ALLOWED_TEAMS = ["T0001", "T0002", "T0003", "E0ORG"] as const;

/**
 * The bot's environment for many workspaces: the three OAuth settings, the key, who may
 * install (and be answered), no bot token.
 */
export const OAUTH_ENV: Record<string, string> = {
  SLACK_BOT_TOKEN: "",
  SLACK_CLIENT_ID: CLIENT_ID,
  SLACK_CLIENT_SECRET: CLIENT_SECRET,
  SLACK_STATE_SECRET: STATE_SECRET,
  TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
  ALLOWED_TEAM_IDS: ALLOWED_TEAMS.join(","),
};

/** The fake Slack's side: it knows the app's credentials, and refuses tokens nobody issued. */
export const OAUTH_SLACK = {
  oauth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, appId: "A0APP" },
  botToken: "xoxb-no-workspace-has-this-token",
};

export interface InstallStart {
  status: number;
  /** Where the bot sent the browser. */
  location: URL;
  state: string;
  /** The state cookie the bot set, as the browser sends it back. */
  cookie: string;
}

/** GET /slack/install: the redirect to Slack, its state and the state cookie. */
export async function startInstall(botUrl: string): Promise<InstallStart> {
  const response = await fetch(`${botUrl}/slack/install`, { redirect: "manual" });
  await response.text();
  const location = new URL(response.headers.get("location") ?? "about:blank");
  const setCookie = response.headers.get("set-cookie") ?? "";
  return {
    status: response.status,
    location,
    state: location.searchParams.get("state") ?? "",
    cookie: setCookie.split(";")[0] ?? "",
  };
}

/** GET /slack/oauth_redirect as Slack sends the browser back; the bot's status and page. */
export async function finishInstall(
  botUrl: string,
  params: { code: string; state: string; cookie: string },
): Promise<{ status: number; body: string }> {
  const query = new URLSearchParams({ code: params.code, state: params.state });
  const response = await fetch(`${botUrl}/slack/oauth_redirect?${query}`, {
    headers: { cookie: params.cookie },
    redirect: "manual",
  });
  return { status: response.status, body: await response.text() };
}

/** The whole flow for a new workspace; throws unless the bot answered the redirect with 200. */
export async function installWorkspace(
  botUrl: string,
  slack: FakeSlack,
  install: NewInstall,
): Promise<void> {
  const started = await startInstall(botUrl);
  const code = slack.installCode(install);
  const done = await finishInstall(botUrl, { code, state: started.state, cookie: started.cookie });
  if (done.status !== 200) throw new Error(`the install failed (${done.status}): ${done.body}`);
}
