import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  BotTokenSealBroken,
  openBotToken,
  sealBotToken,
} from "../../src/slack/installations/bot-token-seal.js";
import { memoryStores } from "../../src/store/in-memory.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import type { StoredInstallation, Stores } from "../../src/store/stores.js";
import { postgresStores } from "../support/postgres.js";
import { tempFolder } from "../support/temp-folder.js";

/** One suite, every implementation: the app's installations, one per workspace or org. */
const implementations: [string, (now: () => number) => { stores: Stores; path?: string }][] = [
  ["memory", (now) => ({ stores: memoryStores(now) })],
  [
    "sqlite",
    (now) => {
      const path = join(tempFolder("installation-stores-"), "bridge.db");
      return { stores: openSqliteStores(path, now), path };
    },
  ],
  ["postgres", (now) => ({ stores: postgresStores(now) })],
];

const KEY = randomBytes(32);
const TOKEN_ONE = "xoxb-1111-workspace-one-secret";

/** An installation as the install flow would keep it, its token sealed. */
function installation(
  enterprise: string,
  team: string,
  token: string,
  extra: Partial<StoredInstallation> = {},
): Omit<StoredInstallation, "installedAt"> {
  return {
    enterprise,
    team,
    teamName: team === "" ? null : `Team ${team}`,
    enterpriseName: enterprise === "" ? null : `Org ${enterprise}`,
    appId: "A0APP",
    botUserId: `U${team || enterprise}`,
    botId: `B${team || enterprise}`,
    botScopes: ["app_mentions:read", "chat:write"],
    sealedBotToken: sealBotToken(KEY, { enterprise, team }, token),
    installerUserId: "U0ADMIN",
    ...extra,
  };
}

describe.each(implementations)("the %s installations", (_name, open) => {
  it("keeps one installation per workspace, replaced by a reinstall", async () => {
    let now = 1_000;
    const { stores } = open(() => now);
    const { installations } = stores;
    expect(await installations.find({ team: "T1" })).toBeUndefined();
    const first = await installations.put(installation("", "T1", TOKEN_ONE));
    expect(first).toMatchObject({
      enterprise: "",
      team: "T1",
      teamName: "Team T1",
      enterpriseName: null,
      appId: "A0APP",
      botUserId: "UT1",
      botId: "BT1",
      botScopes: ["app_mentions:read", "chat:write"],
      installerUserId: "U0ADMIN",
      installedAt: 1_000,
    });
    expect(openBotToken(KEY, { enterprise: "", team: "T1" }, first.sealedBotToken)).toBe(TOKEN_ONE);
    now = 2_000;
    await installations.put(installation("", "T2", "xoxb-two"));
    now = 3_000;
    await installations.put(
      installation("", "T1", "xoxb-one-again", { botScopes: ["chat:write"] }),
    );
    const again = await installations.find({ team: "T1" });
    expect(again).toMatchObject({ installedAt: 3_000, botScopes: ["chat:write"] });
    expect(openBotToken(KEY, { enterprise: "", team: "T1" }, again?.sealedBotToken as Buffer)).toBe(
      "xoxb-one-again",
    );
    expect((await installations.list()).map((i) => [i.team, i.installedAt])).toEqual([
      ["T2", 2_000],
      ["T1", 3_000],
    ]);
    await stores.close();
  });

  it("finds a workspace's own installation first, else its org's org-wide one", async () => {
    const { stores } = open(() => 1_000);
    const { installations } = stores;
    await installations.put(installation("E1", "", "xoxb-org"));
    await installations.put(installation("E1", "T1", "xoxb-own"));
    expect(await installations.find({ team: "T1", enterprise: "E1" })).toMatchObject({
      team: "T1",
    });
    // Any other workspace of the org is served by the org-wide installation.
    expect(await installations.find({ team: "T9", enterprise: "E1" })).toMatchObject({
      enterprise: "E1",
      team: "",
      teamName: null,
      enterpriseName: "Org E1",
    });
    expect(await installations.find({ enterprise: "E1" })).toMatchObject({ team: "" });
    // Another org, or no org at all, is not.
    expect(await installations.find({ team: "T9", enterprise: "E2" })).toBeUndefined();
    expect(await installations.find({ team: "T9" })).toBeUndefined();
    expect(await installations.find({})).toBeUndefined();
    await stores.close();
  });

  it("finds a workspace's org-wide installation by its team alone once its org is recorded", async () => {
    const { installations } = open(() => 1_000).stores;
    await installations.put(installation("E1", "", "xoxb-org-secret"));
    expect(await installations.find({ team: "T7" })).toBeUndefined();
    await installations.placeWorkspace("T7", "E1");
    await installations.placeWorkspace("T8", "E1");
    await installations.placeWorkspace("T9", "E2");
    expect(await installations.find({ team: "T7" })).toMatchObject({ enterprise: "E1", team: "" });
    // The org a request names goes before the one recorded.
    expect(await installations.find({ team: "T7", enterprise: "E2" })).toBeUndefined();
    await installations.placeWorkspace("T8", "E2");
    expect(await installations.workspacesOf("E1")).toEqual(["T7"]);
    expect((await installations.workspacesOf("E2")).sort()).toEqual(["T8", "T9"]);
  });

  it("keeps one installation per workspace whichever org it named", async () => {
    const { stores } = open(() => 1_000);
    const { installations } = stores;
    await installations.put(installation("", "T1", "xoxb-before"));
    // The workspace joined an org and was installed again.
    await installations.put(installation("E1", "T1", "xoxb-after"));
    expect((await installations.list()).map((i) => [i.enterprise, i.team])).toEqual([["E1", "T1"]]);
    await stores.close();
  });

  it("forgets a removed installation, and the others stay", async () => {
    const { stores } = open(() => 1_000);
    const { installations } = stores;
    await installations.put(installation("", "T1", "a"));
    await installations.put(installation("E1", "", "b"));
    expect(await installations.remove({ enterprise: "", team: "T1" })).toBe(true);
    expect(await installations.remove({ enterprise: "", team: "T1" })).toBe(false);
    expect(await installations.find({ team: "T1" })).toBeUndefined();
    expect(await installations.remove({ enterprise: "E1", team: "" })).toBe(true);
    expect(await installations.list()).toEqual([]);
    await stores.close();
  });

  it("reseals tokens all together; a removed installation stays removed", async () => {
    const { stores } = open(() => 1_000);
    const { installations } = stores;
    await installations.put(installation("", "T1", "a"));
    await installations.put(installation("", "T2", "b"));
    await installations.remove({ enterprise: "", team: "T2" });
    await installations.reseal([
      { enterprise: "", team: "T1", sealedBotToken: Buffer.from([1]) },
      { enterprise: "", team: "T2", sealedBotToken: Buffer.from([2]) },
    ]);
    expect((await installations.list()).map((i) => [i.team, [...i.sealedBotToken]])).toEqual([
      ["T1", [1]],
    ]);
    await stores.close();
  });

  it("never holds a bot token in clear", async () => {
    const { stores, path } = open(() => 1_000);
    await stores.installations.put(installation("", "T1", TOKEN_ONE));
    await stores.close();
    if (path !== undefined) {
      const file = readFileSync(path);
      expect(file.includes(Buffer.from("workspace-one-secret"))).toBe(false);
    }
  });
});

describe("a sealed bot token", () => {
  it("does not open for another installation, nor under another key", () => {
    const sealed = sealBotToken(KEY, { enterprise: "", team: "T1" }, TOKEN_ONE);
    expect(() => openBotToken(KEY, { enterprise: "", team: "T2" }, sealed)).toThrow(
      BotTokenSealBroken,
    );
    expect(() => openBotToken(KEY, { enterprise: "E1", team: "T1" }, sealed)).toThrow(
      BotTokenSealBroken,
    );
    expect(() => openBotToken(randomBytes(32), { enterprise: "", team: "T1" }, sealed)).toThrow(
      "an installation's bot token could not be opened with this key",
    );
  });
});
