import { LogLevel, WebClient } from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

const CLIENT_ID = "1111.2222";
const CLIENT_SECRET = "client-secret-value-xyz";
const FIRST_TOKEN = "xoxb-first-workspace-token";

let fake: FakeSlack;
beforeEach(async () => {
  fake = await startFakeSlack({
    botToken: FIRST_TOKEN,
    oauth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, appId: "A0APP" },
    limits: { "auth.test": 3 },
  });
});
afterEach(() => fake.close());

function client(token?: string): WebClient {
  return new WebClient(token, {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    logLevel: LogLevel.ERROR,
  });
}

/** The error code a failing call is rejected with. */
function failure(call: Promise<unknown>): Promise<string | undefined> {
  return call.then(
    () => undefined,
    (e: { data?: { error?: string }; code?: string }) => e.data?.error ?? e.code,
  );
}

/** Installs the app in a new workspace through oauth.v2.access; its bot token. */
async function install(teamId: string, botUserId: string): Promise<string> {
  const code = fake.installCode({
    teamId,
    teamName: `Team ${teamId}`,
    botUserId,
    botId: `B${teamId}`,
  });
  const answer = await client().oauth.v2.access({
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    code,
  });
  return answer.access_token as string;
}

describe("oauth.v2.access", () => {
  it("exchanges an install code once, answering Slack's shape", async () => {
    const code = fake.installCode({
      teamId: "T0002",
      teamName: "Second",
      botUserId: "UBOT2",
      installerId: "U0ADMIN",
      redirectUri: "https://bot.example/slack/oauth_redirect",
      scopes: ["chat:write", "commands"],
    });
    const args = {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      code,
      redirect_uri: "https://bot.example/slack/oauth_redirect",
    };
    const answer = await client().oauth.v2.access(args);
    expect(answer).toMatchObject({
      ok: true,
      token_type: "bot",
      scope: "chat:write,commands",
      bot_user_id: "UBOT2",
      app_id: "A0APP",
      team: { id: "T0002", name: "Second" },
      enterprise: null,
      is_enterprise_install: false,
      authed_user: { id: "U0ADMIN" },
    });
    expect(answer.access_token).toMatch(/^xoxb-/);
    expect(await failure(client().oauth.v2.access(args))).toBe("code_already_used");
    // The secret and the token are never recorded.
    const recorded = JSON.stringify(fake.calls);
    expect(recorded).not.toContain(CLIENT_SECRET);
    expect(recorded).not.toContain(answer.access_token as string);
    expect(fake.callsTo("oauth.v2.access")[0]?.args).toMatchObject({ client_id: CLIENT_ID, code });
  });

  it("checks the client id, the secret, the code and the redirect URI", async () => {
    const code = fake.installCode({ teamId: "T0002", redirectUri: "https://a.example/cb" });
    const exchange = (args: Record<string, string>) =>
      failure(
        client().oauth.v2.access({
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          code,
          ...args,
        }),
      );
    expect(await exchange({ client_id: "9.9" })).toBe("invalid_client_id");
    expect(await exchange({ client_secret: "wrong" })).toBe("bad_client_secret");
    expect(await exchange({ code: "code-unknown" })).toBe("invalid_code");
    expect(await exchange({ redirect_uri: "https://b.example/cb" })).toBe("bad_redirect_uri");
    // None of the refusals used the code up.
    expect(await exchange({ redirect_uri: "https://a.example/cb" })).toBeUndefined();
  });

  it("takes the client credentials as HTTP Basic too", async () => {
    const code = fake.installCode({ teamId: "T0002" });
    const response = await fetch(`${fake.apiUrl}oauth.v2.access`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64")}`,
      },
      body: new URLSearchParams({ code }),
    });
    expect(await response.json()).toMatchObject({ ok: true, team: { id: "T0002" } });
  });

  it("answers an org-wide install with the org and no team", async () => {
    const code = fake.installCode({
      enterpriseId: "E0ORG",
      enterpriseName: "The Org",
      orgWide: true,
      botUserId: "UORGBOT",
    });
    const answer = await client().oauth.v2.access({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      code,
    });
    expect(answer).toMatchObject({
      team: null,
      enterprise: { id: "E0ORG", name: "The Org" },
      is_enterprise_install: true,
      bot_user_id: "UORGBOT",
    });
    const me = await client(answer.access_token).auth.test();
    expect(me).toMatchObject({
      enterprise_id: "E0ORG",
      is_enterprise_install: true,
      user_id: "UORGBOT",
    });
  });
});

describe("several workspaces", () => {
  it("serves each call from the workspace its token names, and records which", async () => {
    const second = await install("T0002", "UBOT2");
    expect(await client(FIRST_TOKEN).auth.test()).toMatchObject({
      team_id: "T0001",
      user_id: "UBOT",
    });
    expect(await client(second).auth.test()).toMatchObject({
      team_id: "T0002",
      team: "Team T0002",
      user_id: "UBOT2",
      bot_id: "BT0002",
    });
    await client(second).chat.postMessage({ channel: "C2", text: "in two" });
    await client(FIRST_TOKEN).chat.postMessage({ channel: "C2", text: "in one" });
    expect(
      fake
        .workspace("T0002")
        .messages("C2")
        .map((m) => [m.text, m.bot_id]),
    ).toEqual([["in two", "BT0002"]]);
    expect(fake.messages("C2").map((m) => [m.text, m.bot_id])).toEqual([["in one", "BBOT"]]);
    expect(fake.callsTo("chat.postMessage").map((c) => c.team)).toEqual(["T0002", "T0001"]);
    expect(fake.callsTo("oauth.v2.access")[0]?.team).toBeUndefined();
  });

  it("keeps each workspace's rate budgets apart", async () => {
    const second = await install("T0002", "UBOT2");
    for (let i = 0; i < 3; i++) await client(second).auth.test();
    expect(await failure(client(second).auth.test())).toBe("slack_webapi_rate_limited_error");
    expect(fake.workspace("T0002").rateLimitedFor("auth.test")).toBe(1);
    expect(fake.workspace("T0002").spent("auth.test")).toBe(3);
    expect(fake.workspace("T0001").spent("auth.test")).toBe(0);
    expect(await client(FIRST_TOKEN).auth.test()).toMatchObject({ ok: true, team_id: "T0001" });
    expect(fake.workspace("T0001").rateLimited).toBe(0);
  });

  it("refuses a token nobody issued once the first workspace has its own", async () => {
    expect(await failure(client("xoxb-made-up").auth.test())).toBe("invalid_auth");
    expect(fake.calls[0]).toMatchObject({ error: "invalid_auth", hadToken: true });
    expect(fake.calls[0]?.team).toBeUndefined();
  });

  it("a reinstall issues a new token and retires the old one", async () => {
    const before = await install("T0002", "UBOT2");
    const after = await install("T0002", "UBOT2");
    expect(after).not.toBe(before);
    expect(await failure(client(before).auth.test())).toBe("token_revoked");
    expect(await client(after).auth.test()).toMatchObject({ team_id: "T0002" });
  });
});

describe("uninstalling", () => {
  it("revokes the workspace's token and gives the app_uninstalled envelope", async () => {
    const second = await install("T0002", "UBOT2");
    const envelope = fake.uninstall("T0002");
    expect(envelope).toMatchObject({
      type: "event_callback",
      team_id: "T0002",
      event: { type: "app_uninstalled" },
      authorizations: [{ team_id: "T0002", user_id: "UBOT2", is_enterprise_install: false }],
    });
    expect(await failure(client(second).chat.postMessage({ channel: "C1", text: "x" }))).toBe(
      "token_revoked",
    );
    // The refused call still names the workspace its token was issued for.
    expect(fake.callsTo("chat.postMessage").at(-1)).toMatchObject({ team: "T0002", ok: false });
    expect(await client(FIRST_TOKEN).auth.test()).toMatchObject({ team_id: "T0001" });
  });

  it("names the bot user in tokens_revoked", async () => {
    const second = await install("T0002", "UBOT2");
    expect(fake.revokeTokens("T0002")).toMatchObject({
      team_id: "T0002",
      event: { type: "tokens_revoked", tokens: { bot: ["UBOT2"], oauth: [] } },
    });
    expect(await failure(client(second).auth.test())).toBe("token_revoked");
  });

  it("wraps an org-wide installation's events for the org", async () => {
    fake.installCode({ enterpriseId: "E0ORG", orgWide: true, botUserId: "UORGBOT" });
    const org = fake.workspace("E0ORG");
    // An event in one of the org's workspaces names that workspace; the authorization, the org.
    expect(fake.envelope(org, { type: "app_mention" }, "T0ORGA")).toMatchObject({
      team_id: "T0ORGA",
      enterprise_id: "E0ORG",
      authorizations: [{ enterprise_id: "E0ORG", team_id: null, is_enterprise_install: true }],
    });
    expect(fake.uninstall("E0ORG")).toMatchObject({
      authorizations: [{ enterprise_id: "E0ORG", team_id: null, is_enterprise_install: true }],
    });
  });

  it("the first workspace uninstalled stops answering its token", async () => {
    fake.uninstall("T0001");
    expect(await failure(client(FIRST_TOKEN).auth.test())).toBe("token_revoked");
  });
});

describe("reset", () => {
  it("forgets every workspace but the first, and every install", async () => {
    const second = await install("T0002", "UBOT2");
    fake.reset();
    expect(() => fake.workspace("T0002")).toThrow("no workspace T0002");
    expect(await failure(client(second).auth.test())).toBe("invalid_auth");
    expect(await client(FIRST_TOKEN).auth.test()).toMatchObject({ team_id: "T0001" });
  });
});
