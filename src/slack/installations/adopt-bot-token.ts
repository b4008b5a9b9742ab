import { AuthTest, parseResponse } from "../web-api/web-api-responses.js";
import type { BoltApp } from "./app.js";
import type { Installations } from "./installations.js";

/**
 * Many workspaces, and SLACK_BOT_TOKEN set too (an app that served one workspace before it
 * was opened to others): that workspace stays served, its token kept as its installation.
 * Checked with auth.test first; fails with one sentence naming the variable, never the token.
 */
export async function adoptBotToken(
  app: BoltApp,
  installations: Installations,
  token: string,
  apiUrl: string,
): Promise<void> {
  let answer: unknown;
  try {
    answer = await app.client.auth.test({ token });
  } catch (error) {
    const code = (error as { data?: { error?: unknown } }).data?.error;
    if (typeof code === "string") {
      throw new Error(`Slack refused SLACK_BOT_TOKEN (${code}). Check the bot token of your app.`);
    }
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Could not reach Slack at ${apiUrl} to check SLACK_BOT_TOKEN: ${reason}`);
  }
  const me = parseResponse("auth.test", AuthTest, answer);
  const orgWide = (answer as { is_enterprise_install?: unknown }).is_enterprise_install === true;
  const team = (answer as { team?: unknown }).team;
  if (me.bot_id === undefined)
    throw new Error("SLACK_BOT_TOKEN is not a bot token (auth.test named no bot).");
  await installations.save(
    {
      enterprise: me.enterprise_id ?? "",
      team: orgWide ? "" : me.team_id,
      teamName: typeof team === "string" ? team : null,
      enterpriseName: null,
      appId: null,
      botUserId: me.user_id,
      botId: me.bot_id,
      botScopes: [],
      installerUserId: null,
    },
    token,
  );
}
