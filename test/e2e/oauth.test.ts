import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BOT_SCOPES } from "../../src/slack/bot-scopes.js";
import { type Harness, startHarness } from "../support/bridge-harness.js";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  finishInstall,
  OAUTH_ENV,
  OAUTH_SLACK,
  STATE_SECRET,
  startInstall,
} from "../support/oauth-install.js";

let h: Harness;
beforeEach(async () => {
  h = await startHarness({ env: OAUTH_ENV, slack: OAUTH_SLACK });
});
afterEach(async () => {
  await h.close();
});

/** Every byte of the database (its WAL included): what a copy of the file would give away. */
function databaseBytes(path: string): Buffer {
  const folder = dirname(path);
  return Buffer.concat(readdirSync(folder).map((name) => readFileSync(join(folder, name))));
}

describe("installing the app in a workspace (OAuth)", () => {
  it("redirects to Slack's authorize page with a state, and keeps the installation sealed", async () => {
    const started = await startInstall(h.botUrl);
    expect(started.status).toBe(302);
    expect(`${started.location.origin}${started.location.pathname}`).toBe(
      "https://slack.com/oauth/v2/authorize",
    );
    expect(started.location.searchParams.get("client_id")).toBe(CLIENT_ID);
    expect(started.location.searchParams.get("scope")).toBe(BOT_SCOPES.join(","));
    expect(started.state).not.toBe("");
    expect(started.cookie).toBe(`slack-app-oauth-state=${started.state}`);

    const code = h.slack.installCode({
      teamId: "T0002",
      teamName: "Second",
      botUserId: "UBOT2",
      botId: "BBOT2",
      installerId: "U0ADMIN",
    });
    const done = await finishInstall(h.botUrl, { code, ...started });
    expect(done.status).toBe(200);
    expect(h.slack.callsTo("oauth.v2.access")).toMatchObject([
      { ok: true, args: { client_id: CLIENT_ID, code } },
    ]);
    // @slack/oauth asks who the new token's bot is, with that token.
    expect(h.slack.callsTo("auth.test").at(-1)).toMatchObject({ ok: true, team: "T0002" });
    expect(h.bot.stores.installations.list()).toMatchObject([
      {
        enterprise: "",
        team: "T0002",
        teamName: "Second",
        appId: "A0APP",
        botUserId: "UBOT2",
        botId: "BBOT2",
        botScopes: ["app_mentions:read", "chat:write"],
        installerUserId: "U0ADMIN",
      },
    ]);
    const token = h.slack.botTokenOf("T0002") as string;
    expect(token).toMatch(/^xoxb-/);
    const bytes = databaseBytes(h.databasePath);
    expect(bytes.includes(Buffer.from(token))).toBe(false);
    // Neither the bot token nor the app's secrets reach a log line.
    const logs = h.logs.join("\n");
    for (const secret of [token, CLIENT_SECRET, STATE_SECRET]) expect(logs).not.toContain(secret);
  });

  it("refuses a redirect whose state is not this browser's, or a code used before", async () => {
    const first = await startInstall(h.botUrl);
    const second = await startInstall(h.botUrl);
    const code = h.slack.installCode({ teamId: "T0002" });
    const forged = await finishInstall(h.botUrl, {
      code,
      state: first.state,
      cookie: second.cookie,
    });
    expect(forged.status).not.toBe(200);
    expect(h.slack.callsTo("oauth.v2.access")).toEqual([]);

    expect((await finishInstall(h.botUrl, { code, ...second })).status).toBe(200);
    const again = await startInstall(h.botUrl);
    expect((await finishInstall(h.botUrl, { code, ...again })).status).not.toBe(200);
    expect(h.slack.callsTo("oauth.v2.access").map((c) => c.error)).toEqual([
      undefined,
      "code_already_used",
    ]);
    expect(h.bot.stores.installations.list()).toHaveLength(1);
  });
});

describe("installing in Socket Mode", () => {
  it("serves the install pages, and the ops routes, on the bot's own HTTP server", async () => {
    const s = await startHarness({ env: OAUTH_ENV, slack: OAUTH_SLACK, socketMode: true });
    try {
      const started = await startInstall(s.botUrl);
      expect(started.status).toBe(302);
      const code = s.slack.installCode({ teamId: "T0003", botUserId: "UBOT3" });
      expect((await finishInstall(s.botUrl, { code, ...started })).status).toBe(200);
      expect(s.bot.stores.installations.find({ team: "T0003" })).toMatchObject({
        botUserId: "UBOT3",
      });
      expect(s.opsUrl).toBe(s.botUrl);
      expect((await fetch(`${s.botUrl}/healthz`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
