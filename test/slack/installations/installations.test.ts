import { randomBytes } from "node:crypto";
import type { Installation as BoltInstallation, Logger as BoltLogger } from "@slack/bolt";
import { WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webClientOptions } from "../../../src/slack/installations/app.js";
import { ManyInstallations } from "../../../src/slack/installations/installation.js";
import { Installations, NotInstalled } from "../../../src/slack/installations/installations.js";
import { classifyCallFailure } from "../../../src/slack/web-api/call-failure.js";
import { memoryStores } from "../../../src/store/in-memory.js";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

const KEY = randomBytes(32);

/** What the install flow hands Bolt's store for a workspace (or an org, org-wide). */
function fromFlow(team: string | undefined, token: string, enterprise?: string): BoltInstallation {
  return {
    team: team === undefined ? undefined : { id: team, name: `Team ${team}` },
    enterprise: enterprise === undefined ? undefined : { id: enterprise, name: "The Org" },
    user: { id: "U0ADMIN", token: undefined, scopes: undefined },
    bot: {
      token,
      id: `B${team ?? enterprise}`,
      userId: `U${team ?? enterprise}`,
      scopes: ["chat:write"],
    },
    appId: "A0APP",
    tokenType: "bot",
    isEnterpriseInstall: team === undefined,
    authVersion: "v2",
  } as BoltInstallation;
}

/** The installations of another process over the same stores. */
function setupOver(stores: ReturnType<typeof memoryStores>): Installations {
  return new Installations({ store: stores.installations, key: KEY });
}

function setup() {
  const stores = memoryStores(() => 5_000);
  const learnt: string[] = [];
  const broken: string[] = [];
  const installations = new Installations({
    store: stores.installations,
    key: KEY,
    onSecret: (token) => learnt.push(token),
    onBroken: ({ team }) => broken.push(team),
  });
  return { stores, installations, bolt: installations.forBolt(), learnt, broken };
}

describe("the installations Bolt's installer and authorize use", () => {
  it("keeps what the install flow gives, sealed, and gives Bolt the bot back", async () => {
    const { stores, bolt, learnt } = setup();
    await bolt.storeInstallation(fromFlow("T1", "xoxb-one-secret"));
    expect(await stores.installations.list()).toMatchObject([
      {
        enterprise: "",
        team: "T1",
        teamName: "Team T1",
        appId: "A0APP",
        botUserId: "UT1",
        botId: "BT1",
        botScopes: ["chat:write"],
        installerUserId: "U0ADMIN",
        installedAt: 5_000,
      },
    ]);
    const row = (await stores.installations.list())[0];
    expect(row?.sealedBotToken.includes(Buffer.from("xoxb-one-secret"))).toBe(false);
    // The log scrubber learns the token the moment the bot holds it.
    expect(learnt).toContain("xoxb-one-secret");
    const fetched = await bolt.fetchInstallation({
      teamId: "T1",
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(fetched.bot).toMatchObject({ token: "xoxb-one-secret", userId: "UT1", id: "BT1" });
    expect(fetched.team).toEqual({ id: "T1" });
    await expect(
      bolt.fetchInstallation({ teamId: "T9", enterpriseId: undefined, isEnterpriseInstall: false }),
    ).rejects.toThrow(NotInstalled);
  });

  it("answers every workspace of an org from its org-wide installation", async () => {
    const { installations, bolt } = setup();
    await bolt.storeInstallation(fromFlow(undefined, "xoxb-org", "E1"));
    expect(await installations.find({ team: "T7", enterprise: "E1" })).toMatchObject({
      key: { enterprise: "E1", team: "" },
      token: "xoxb-org",
    });
    const fetched = await bolt.fetchInstallation({
      teamId: "T7",
      enterpriseId: "E1",
      isEnterpriseInstall: true,
    });
    expect(fetched).toMatchObject({ team: undefined, isEnterpriseInstall: true });
    expect(fetched.bot?.token).toBe("xoxb-org");
  });

  it("forgets a removed installation at once, and finds one installed meanwhile", async () => {
    const { stores, installations, bolt } = setup();
    expect(await installations.find({ team: "T1" })).toBeUndefined();
    // Installed by another copy of the bot: a miss was not remembered.
    const other = new Installations({ store: stores.installations, key: KEY });
    await other.forBolt().storeInstallation(fromFlow("T1", "xoxb-one"));
    expect((await installations.find({ team: "T1" }))?.token).toBe("xoxb-one");
    expect(await installations.remove({ enterprise: "", team: "T1" })).toBe(true);
    expect(await installations.find({ team: "T1" })).toBeUndefined();
    await bolt.storeInstallation(fromFlow("T1", "xoxb-again"));
    expect((await installations.find({ team: "T1" }))?.token).toBe("xoxb-again");
  });

  it("reads again within 30 s what another replica reinstalled or removed", async () => {
    const stores = memoryStores(() => 5_000);
    let now = 1_000_000;
    const here = new Installations({ store: stores.installations, key: KEY, now: () => now });
    const elsewhere = new Installations({ store: stores.installations, key: KEY }).forBolt();
    await elsewhere.storeInstallation(fromFlow("T1", "xoxb-first"));
    expect((await here.find({ team: "T1" }))?.token).toBe("xoxb-first");
    await elsewhere.storeInstallation(fromFlow("T1", "xoxb-reinstalled"));
    now += 29_000;
    expect((await here.find({ team: "T1" }))?.token).toBe("xoxb-first");
    now += 1_000;
    expect((await here.find({ team: "T1" }))?.token).toBe("xoxb-reinstalled");
    await elsewhere.deleteInstallation?.({ teamId: "T1", isEnterpriseInstall: false } as never);
    now += 30_000;
    expect(await here.find({ team: "T1" })).toBeUndefined();
  });

  it("treats a token that does not open under the key as not installed", async () => {
    const { stores, broken } = setup();
    const before = new Installations({ store: stores.installations, key: randomBytes(32) });
    await before.forBolt().storeInstallation(fromFlow("T1", "xoxb-one"));
    const after = new Installations({
      store: stores.installations,
      key: KEY,
      onBroken: ({ team }) => broken.push(team),
    });
    expect(await after.find({ team: "T1" })).toBeUndefined();
    expect(broken).toEqual(["T1"]);
  });

  it("refuses an installation without a bot", async () => {
    const { bolt } = setup();
    const { bot: _bot, ...userOnly } = fromFlow("T1", "x");
    await expect(bolt.storeInstallation(userOnly)).rejects.toThrow("no bot token");
  });
});

const silent: BoltLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => "error" as ReturnType<BoltLogger["getLevel"]>,
  setName: () => {},
};

describe("each workspace's Web API", () => {
  let fake: FakeSlack;
  beforeAll(async () => {
    fake = await startFakeSlack({
      botToken: "xoxb-nobody",
      oauth: { clientId: "1.2", clientSecret: "secret" },
    });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  /** Installs the app in a workspace of the fake; its bot token. */
  async function install(team: string): Promise<string> {
    const code = fake.installCode({ teamId: team, botUserId: `U${team}`, botId: `B${team}` });
    const answer = await new WebClient(
      undefined,
      webClientOptions(fake.apiUrl, silent),
    ).oauth.v2.access({
      client_id: "1.2",
      client_secret: "secret",
      code,
    });
    return answer.access_token as string;
  }

  it("carries each workspace's own token; an uninstalled one's calls never leave", async () => {
    const { installations, bolt } = setup();
    for (const team of ["T1", "T2"])
      await bolt.storeInstallation(fromFlow(team, await install(team)));
    const client = new WebClient(undefined, webClientOptions(fake.apiUrl, silent));
    const workspaces = new ManyInstallations(client, installations);
    await workspaces.slack("T1").postMessage({ channel: "C1", text: "one" });
    await workspaces.slack("T2").postMessage({ channel: "C2", text: "two" });
    expect(fake.callsTo("chat.postMessage").map((c) => [c.team, c.args.channel])).toEqual([
      ["T1", "C1"],
      ["T2", "C2"],
    ]);
    expect(await workspaces.whoAmI("T2")).toMatchObject({
      teamId: "T2",
      userId: "UT2",
      botId: "BT2",
    });
    expect(await workspaces.workspace({ teamId: "T2" })).toBe("T2");

    await installations.remove({ enterprise: "", team: "T2" });
    const calls = fake.calls.length;
    const refused = await workspaces
      .slack("T2")
      .postMessage({ channel: "C2", text: "gone" })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NotInstalled);
    // Never retried: no call there can succeed until the workspace installs the app again.
    expect(classifyCallFailure(refused)).toEqual({ kind: "permanent", reason: "not_installed" });
    expect(fake.calls).toHaveLength(calls);
  });

  it("finds an org's workspaces after a restart, and forgets them all when the org removes the app", async () => {
    const { stores, installations, bolt } = setup();
    await bolt.storeInstallation(fromFlow(undefined, "xoxb-org-secret", "E1"));
    const before = new ManyInstallations(new WebClient(), installations);
    for (const [teamId, enterpriseId] of [
      ["T7", "E1"],
      ["T8", "E1"],
      ["T9", "E2"],
      ["T10", undefined],
    ]) {
      await before.workspace({ teamId, enterpriseId });
    }
    // Another process (a restart, another replica) that has had no request of T7 yet.
    const after = new ManyInstallations(new WebClient(), setupOver(stores));
    expect((await stores.installations.find({ team: "T7" }))?.enterprise).toBe("E1");
    expect(await stores.installations.find({ team: "T9" })).toBeUndefined();
    expect(await after.forget({ enterprise: "E1", team: "" })).toEqual(["T7", "T8"]);
    expect(await after.forget({ enterprise: "", team: "T10" })).toEqual(["T10"]);
    expect(await after.forget({ enterprise: "E3", team: "" })).toEqual([]);
  });
});
