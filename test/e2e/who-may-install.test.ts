/**
 * Who may install the app (many workspaces): only the workspaces and Enterprise orgs
 * ALLOWED_TEAM_IDS names. The install page is public, so anyone may walk the flow; an install
 * by anyone else ends on a page saying so, its token is revoked at once and never kept, and
 * its people get nothing. In HTTP mode and in Socket Mode (whose install pages have their own
 * server).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { FakeWorkspace, NewInstall } from "../../tools/fake-slack/server.js";
import { appMention, nextTs } from "../../tools/slack-requests.js";
import { type Harness, startHarness } from "../support/bridge-harness.js";
import {
  finishInstall,
  installWorkspace,
  OAUTH_ENV,
  OAUTH_SLACK,
  startInstall,
} from "../support/oauth-install.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Every byte of the database (its WAL included): what a copy of the file would give away. */
function databaseBytes(path: string): Buffer {
  const folder = dirname(path);
  return Buffer.concat(readdirSync(folder).map((name) => readFileSync(join(folder, name))));
}

/** The whole install flow for `install`; the bot's last answer (status and page). */
async function walkInstall(x: Harness, install: NewInstall) {
  const started = await startInstall(x.botUrl);
  expect(started.status).toBe(302);
  const code = x.slack.installCode(install);
  return finishInstall(x.botUrl, { code, state: started.state, cookie: started.cookie });
}

describe.each([
  { mode: "HTTP", socketMode: false },
  { mode: "Socket Mode", socketMode: true },
])("installing the app ($mode)", ({ socketMode }) => {
  /** A person of the workspace mentions its bot, delivered as this mode delivers events. */
  async function mention(x: Harness, ws: FakeWorkspace, channel: string): Promise<string> {
    const ts = nextTs();
    const user = `U${ws.teamId}PERSON`;
    const text = `<@${ws.botUserId}> use the company's assistant for me`;
    ws.seedMessage({ channel, ts, user, text });
    const envelope = x.slack.envelope(ws, appMention({ channel, user, text, ts, team: ws.teamId }));
    if (socketMode) await x.slack.socket.send("events_api", envelope);
    else expect((await x.post("event", envelope)).status).toBe(200);
    return ts;
  }

  it("refuses a workspace ALLOWED_TEAM_IDS does not name: a page says so, its token is revoked and never kept", async () => {
    const x = await startHarness({ env: OAUTH_ENV, slack: OAUTH_SLACK, socketMode });
    h = x;
    const done = await walkInstall(x, {
      teamId: "T0STRANGER",
      teamName: "Stranger & Co",
      botUserId: "UBOTX",
      botId: "BBOTX",
    });
    expect(done.status).toBe(403);
    expect(done.body).toContain("This app can't be installed in Stranger &amp; Co");
    expect(done.body).toContain(
      "ask whoever runs this app (the person who gave you the install link) to add <code>T0STRANGER</code> to its <code>ALLOWED_TEAM_IDS</code>",
    );
    // Slack issued a token (the code was exchanged), and the bot gave it back at once.
    expect(x.slack.callsTo("oauth.v2.access")).toMatchObject([{ ok: true }]);
    expect(x.slack.callsTo("auth.revoke")).toMatchObject([{ ok: true, team: "T0STRANGER" }]);
    const [token] = x.slack.tokensIssuedTo("T0STRANGER");
    expect(token).toMatch(/^xoxb-/);
    expect(x.slack.botTokenOf("T0STRANGER")).toBeUndefined();
    // Nothing was kept: no installation, and the token's bytes are in no file of the database.
    expect(await x.bot.stores.installations.list()).toEqual([]);
    expect(databaseBytes(x.databasePath).includes(Buffer.from(token as string))).toBe(false);

    // Its people get nothing: the event is dropped at `authorize`, nothing recorded or asked.
    const ts = await mention(x, x.slack.workspace("T0STRANGER"), "C0STRANGE");
    await x.bot.bridge.idle();
    expect(await x.bot.stores.turns.byMessage("T0STRANGER", "C0STRANGE", ts)).toBeUndefined();
    expect(x.sim.control.requests).toEqual([]);
    expect(x.slack.callsTo("chat.postMessage")).toEqual([]);

    const logs = x.logs.join("\n");
    expect(logs).toContain(
      "an install by a workspace or org not in ALLOWED_TEAM_IDS was refused; nothing was kept",
    );
    expect(logs).toContain("an event of a workspace not installed was ignored");
    expect(logs).not.toContain(token);
  });

  it("refuses an org-wide install of an org not named, and lets the named install", async () => {
    const x = await startHarness({ env: OAUTH_ENV, slack: OAUTH_SLACK, socketMode });
    h = x;
    const org = await walkInstall(x, {
      enterpriseId: "E0ELSE",
      enterpriseName: "Elsewhere",
      orgWide: true,
      botUserId: "UBOTE",
    });
    expect(org.status).toBe(403);
    expect(org.body).toContain("<code>E0ELSE</code>");
    expect(await x.bot.stores.installations.list()).toEqual([]);

    // A listed workspace, a workspace of a listed org, and a listed org org-wide all install.
    await installWorkspace(x.botUrl, x.slack, { teamId: "T0002", botUserId: "UBOT2" });
    await installWorkspace(x.botUrl, x.slack, {
      teamId: "T0GRID",
      enterpriseId: "E0ORG",
      botUserId: "UBOTG",
    });
    await installWorkspace(x.botUrl, x.slack, {
      enterpriseId: "E0ORG",
      orgWide: true,
      botUserId: "UORGBOT",
    });
    expect(
      (await x.bot.stores.installations.list()).map((i) => `${i.enterprise}/${i.team}`).sort(),
    ).toEqual(["/T0002", "E0ORG/", "E0ORG/T0GRID"]);
    expect(x.slack.callsTo("auth.revoke")).toMatchObject([{ ok: true, team: "E0ELSE" }]);
  });
});
