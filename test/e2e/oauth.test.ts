import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BOT_SCOPES } from "../../src/slack/installations/bot-scopes.js";
import { LINK_VIEW_ID } from "../../src/slack/surfaces/link-form.js";
import type { FakeWorkspace } from "../../tools/fake-slack/server.js";
import { appMention, nextTs, viewSubmission } from "../../tools/slack-requests.js";
import {
  BOT_TOKEN,
  CHANNEL,
  type Harness,
  hasStopButton,
  startHarness,
} from "../support/bridge-harness.js";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  finishInstall,
  installWorkspace,
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
    expect(await h.bot.stores.installations.list()).toMatchObject([
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
    expect(await h.bot.stores.installations.list()).toHaveLength(1);
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
      expect(await s.bot.stores.installations.find({ team: "T0003" })).toMatchObject({
        botUserId: "UBOT3",
      });
      expect(s.opsUrl).toBe(s.botUrl);
      expect((await fetch(`${s.botUrl}/healthz`)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

/** A person of the workspace mentions its bot in a channel; the message's ts and the bot's answer. */
async function ask(
  ws: FakeWorkspace,
  channel: string,
  text: string,
  user = `U${ws.teamId}PERSON`,
): Promise<{ ts: string; status: number }> {
  const ts = nextTs();
  const question = `<@${ws.botUserId}> ${text}`;
  ws.seedMessage({ channel, ts, user, text: question });
  const event = appMention({ channel, user, text: question, ts, team: ws.teamId });
  const response = await h.post("event", h.slack.envelope(ws, event));
  return { ts, status: response.status };
}

/** The bot's replies in the thread once the last shows no Stop button, as people see them. */
async function answered(ws: FakeWorkspace, channel: string, threadTs: string): Promise<string[]> {
  await h.slack.waitFor(() => {
    const replies = ws.replies(channel, threadTs);
    return replies.length > 0 && replies.every((m) => !hasStopButton(m));
  }, 10_000);
  await h.bot.bridge.idle();
  return ws.threadTranscript(channel, threadTs);
}

describe("several workspaces", () => {
  it("answers each with its own token and budgets; an uninstalled one is answered no more", async () => {
    await installWorkspace(h.botUrl, h.slack, {
      teamId: "T0002",
      botUserId: "UBOT2",
      botId: "BBOT2",
    });
    await installWorkspace(h.botUrl, h.slack, {
      teamId: "T0003",
      botUserId: "UBOT3",
      botId: "BBOT3",
    });
    const two = h.slack.workspace("T0002");
    const three = h.slack.workspace("T0003");
    const bytes = databaseBytes(h.databasePath);
    for (const team of ["T0002", "T0003"]) {
      expect(bytes.includes(Buffer.from(h.slack.botTokenOf(team) as string))).toBe(false);
    }

    const answerTwo = "Two's answer:\n\n- **first**\n- second";
    h.sim.control.enqueueAnswer({ text: answerTwo });
    const inTwo = await ask(two, "C2GENERAL", "what about two?");
    expect(inTwo.status).toBe(200);
    expect((await answered(two, "C2GENERAL", inTwo.ts)).join("\n")).toContain(answerTwo);

    const answerThree = "Three's answer, `exactly`.";
    h.sim.control.enqueueAnswer({ text: answerThree });
    const inThree = await ask(three, "C3GENERAL", "and three?");
    expect((await answered(three, "C3GENERAL", inThree.ts)).join("\n")).toContain(answerThree);

    // What was passed on: each question, without its own workspace's bot mention.
    expect(h.serviceRequests("POST", /\/messages$/).map((r) => r.body)).toEqual([
      { content: "what about two?" },
      { content: "and three?" },
    ]);
    // Each workspace's calls carried its own token: the fake served them from that workspace.
    const servedBy = (channel: string) =>
      new Set(h.slack.calls.filter((c) => c.args.channel === channel).map((c) => c.team));
    expect(servedBy("C2GENERAL")).toEqual(new Set(["T0002"]));
    expect(servedBy("C3GENERAL")).toEqual(new Set(["T0003"]));
    expect(h.slack.calls.filter((c) => c.team === "T0001")).toEqual([]);
    expect(h.slack.calls.every((c) => c.ok)).toBe(true);
    // And each spent its own workspace's budgets.
    for (const ws of [two, three]) expect(ws.spent("chat.postMessage")).toBeGreaterThan(0);
    expect(h.slack.workspace("T0001").spent("chat.postMessage")).toBe(0);

    // Workspace three removes the app.
    const removed = await h.post("event", h.slack.uninstall("T0003"));
    expect(removed.status).toBe(200);
    expect(await h.bot.stores.installations.find({ team: "T0003" })).toBeUndefined();
    expect(await h.bot.stores.installations.find({ team: "T0002" })).toBeDefined();
    const later = await ask(three, "C3GENERAL", "still there?");
    expect(later.status).toBe(200);
    const callsBefore = h.slack.calls.length;
    // Nothing was recorded for it (the event is acknowledged once its listener would have).
    expect(await h.bot.stores.turns.byMessage("T0003", "C3GENERAL", later.ts)).toBeUndefined();

    const again = "Two still answers.";
    h.sim.control.enqueueAnswer({ text: again });
    const inTwoAgain = await ask(two, "C2GENERAL", "still two?");
    expect((await answered(two, "C2GENERAL", inTwoAgain.ts)).join("\n")).toContain(again);
    expect(three.replies("C3GENERAL", later.ts)).toEqual([]);
    expect(h.slack.calls.slice(callsBefore).filter((c) => c.team === "T0003")).toEqual([]);
    expect(h.serviceRequests("POST", /\/messages$/)).toHaveLength(3);
    const logs = h.logs.join("\n");
    // The later event of workspace three is dropped at `authorize`, noted without alarm.
    expect(logs).toContain("an event of a workspace not installed was ignored");
    expect(logs).not.toContain("Slack listener failed");
    for (const team of ["T0002", "T0003"]) {
      expect(logs).not.toContain(h.slack.botTokenOf(team) ?? "no token left");
    }
  });

  it("stops a workspace's answer being written when it removes the app, saying nothing more there", async () => {
    await installWorkspace(h.botUrl, h.slack, { teamId: "T0002", botUserId: "UBOT2" });
    const two = h.slack.workspace("T0002");
    h.sim.control.enqueueAnswer({ text: "Words that go on and on…", hang: true });
    const asked = await ask(two, "C2GENERAL", "a long one?");
    await h.slack.waitFor(() =>
      two.replies("C2GENERAL", asked.ts).some((m) => m.text.includes("on and on")),
    );
    await h.post("event", h.slack.uninstall("T0002"));
    await h.bot.bridge.idle();
    const turn = await h.bot.stores.turns.byMessage("T0002", "C2GENERAL", asked.ts);
    expect(turn?.state).toBe("finished");
    // Its run was stopped at the service.
    expect(h.serviceRequests("POST", /^\/v1\/runs\/[^/]+\/stop$/)).toEqual([
      { path: `/v1/runs/${turn?.runId}/stop`, body: expect.anything() },
    ]);
    // Nothing reached Slack for it once the installation was gone: the reply shows what it showed.
    const refused = h.slack.calls.filter((c) => c.team === "T0002" && !c.ok);
    expect(refused.every((c) => c.error === "token_revoked")).toBe(true);
    expect(
      two
        .replies("C2GENERAL", asked.ts)
        .map((m) => m.text)
        .join(),
    ).not.toContain("stopped");
  });

  it("deletes an installation whose bot token is revoked", async () => {
    await installWorkspace(h.botUrl, h.slack, { teamId: "T0002", botUserId: "UBOT2" });
    const response = await h.post("event", h.slack.revokeTokens("T0002"));
    expect(response.status).toBe(200);
    expect(await h.bot.stores.installations.list()).toEqual([]);
  });
});

describe("an Enterprise org installing the app once, org-wide", () => {
  it("answers people in each of its workspaces with the org's token, until the org removes it", async () => {
    await installWorkspace(h.botUrl, h.slack, {
      enterpriseId: "E0ORG",
      orgWide: true,
      botUserId: "UORGBOT",
      botId: "BORGBOT",
    });
    const org = h.slack.workspace("E0ORG");
    const token = h.slack.botTokenOf("E0ORG") as string;
    expect(databaseBytes(h.databasePath).includes(Buffer.from(token))).toBe(false);

    const places = [
      { team: "T0ORGA", channel: "C0ORGA", answer: "From the first workspace of the org." },
      { team: "T0ORGB", channel: "C0ORGB", answer: "And from the second workspace of the org." },
    ];
    for (const { team, channel, answer } of places) {
      h.sim.control.enqueueAnswer({ text: answer });
      const asked = await askInOrg(org, team, channel, `what about ${team}?`);
      expect(asked.status).toBe(200);
      expect((await answered(org, channel, asked.ts)).join("\n")).toContain(answer);
      // Each workspace of the org keys its own conversations and turns.
      expect((await h.bot.stores.turns.byMessage(team, channel, asked.ts))?.state).toBe("finished");
    }
    expect(h.serviceRequests("POST", /\/messages$/).map((r) => r.body)).toEqual([
      { content: "what about T0ORGA?" },
      { content: "what about T0ORGB?" },
    ]);
    // Every call carried the org's one token, whichever workspace it was about.
    const inOrg = h.slack.calls.filter((c) =>
      ["C0ORGA", "C0ORGB"].includes(String(c.args.channel)),
    );
    expect(inOrg.length).toBeGreaterThan(0);
    expect(inOrg.every((c) => c.ok && c.team === "E0ORG")).toBe(true);

    // The org removes the app: no workspace of it is answered any more.
    expect((await h.post("event", h.slack.uninstall("E0ORG"))).status).toBe(200);
    expect(await h.bot.stores.installations.list()).toEqual([]);
    const later = await askInOrg(org, "T0ORGB", "C0ORGB", "still there?");
    expect(later.status).toBe(200);
    expect(await h.bot.stores.turns.byMessage("T0ORGB", "C0ORGB", later.ts)).toBeUndefined();
    expect(h.serviceRequests("POST", /\/messages$/)).toHaveLength(2);
    expect(h.logs.join("\n")).not.toContain(token);
  });
});

/** A person of one workspace of an org mentions the org-wide bot there. */
async function askInOrg(
  org: FakeWorkspace,
  team: string,
  channel: string,
  text: string,
): Promise<{ ts: string; status: number }> {
  const ts = nextTs();
  const user = `U${team}PERSON`;
  // A person of one of the org's workspaces, as users.info tells it (their team and their org).
  org.seedUser({ id: user, name: user.toLowerCase(), team_id: team, enterprise_id: "E0ORG" });
  const question = `<@${org.botUserId}> ${text}`;
  org.seedMessage({ channel, ts, user, text: question });
  const event = appMention({ channel, user, text: question, ts, team });
  const response = await h.post("event", h.slack.envelope(org, event, team));
  return { ts, status: response.status };
}

describe("people's own tokens in several workspaces", () => {
  it("keeps a person's token for the workspace they linked it in, and asks with it only there", async () => {
    await h.close();
    h = await startHarness({
      env: { ...OAUTH_ENV, IDENTITY_MODE: "personal" },
      slack: OAUTH_SLACK,
    });
    for (const teamId of ["T0002", "T0003"]) {
      await installWorkspace(h.botUrl, h.slack, { teamId, botUserId: `UBOT${teamId}` });
    }
    const [two, three] = [h.slack.workspace("T0002"), h.slack.workspace("T0003")];
    // An Enterprise Grid person: one id in both workspaces.
    const person = "W0PAT";
    const token = "pat-of-pat-0123456789abcdef";

    // Not linked yet: told how, in that workspace, and nothing reaches the service.
    await ask(two, "C2GENERAL", "before linking?", person);
    await h.slack.waitFor(() => two.ephemerals.length === 1);
    expect(two.ephemerals[0]?.text).toContain("/assistant link");
    expect(h.sim.control.requests).toEqual([]);

    expect((await h.command("link", { user: person, team: "T0002" })).status).toBe(200);
    await h.slack.waitFor(() => two.views.length === 1);
    const linked = await h.post(
      "action",
      viewSubmission({
        user: person,
        team: "T0002",
        callback_id: LINK_VIEW_ID,
        values: { token: { token: { type: "plain_text_input", value: token } } },
      }),
    );
    expect(JSON.parse(linked.body)).toMatchObject({ response_action: "update" });
    expect(await h.bot.stores.linkedTokens.get("T0002", person)).toBeDefined();
    expect(await h.bot.stores.linkedTokens.get("T0003", person)).toBeUndefined();

    h.sim.control.enqueueAnswer({ text: "Asked as Pat." });
    const inTwo = await ask(two, "C2GENERAL", "as me?", person);
    expect((await answered(two, "C2GENERAL", inTwo.ts)).join("\n")).toContain("Asked as Pat.");
    const sent = () =>
      h.sim.control.requests.filter((r) => r.method === "POST" && r.path !== "/v1/threads");
    expect(new Set(sent().map((r) => r.token))).toEqual(new Set([token]));

    // In the other workspace the same person has linked nothing: told so there, nothing sent.
    const before = sent().length;
    await ask(three, "C3GENERAL", "and here?", person);
    await h.slack.waitFor(() => three.ephemerals.length === 1);
    expect(three.ephemerals[0]?.text).toContain("/assistant link");
    await h.bot.bridge.idle();
    expect(sent()).toHaveLength(before);
    expect(h.logs.join("\n")).not.toContain(token);
  });
});

describe("SLACK_BOT_TOKEN beside the OAuth settings", () => {
  it("keeps its workspace as an installation, answered as before", async () => {
    const s = await startHarness({
      env: { ...OAUTH_ENV, SLACK_BOT_TOKEN: BOT_TOKEN },
      slack: { ...OAUTH_SLACK, botToken: BOT_TOKEN },
    });
    try {
      expect(await s.bot.stores.installations.list()).toMatchObject([
        { enterprise: "", team: "T0001", botUserId: "UBOT", botId: "BBOT" },
      ]);
      s.sim.control.enqueueAnswer({ text: "Still here." });
      const { threadTs } = await s.mention("<@UBOT> hello?");
      expect((await s.settled(CHANNEL, threadTs)).join("\n")).toContain("Still here.");
      expect(databaseBytes(s.databasePath).includes(Buffer.from(BOT_TOKEN))).toBe(false);
    } finally {
      await s.close();
    }
  });
});
