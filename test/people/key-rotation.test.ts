import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RotationRefused, rotateAllKeys, rotateTokenKey } from "../../src/people/key-rotation.js";
import { runRotation } from "../../src/people/rotate-key.js";
import { TokenVault } from "../../src/people/token-vault.js";
import { openBotToken, sealBotToken } from "../../src/slack/bot-token-seal.js";
import { memoryStores } from "../../src/store/memory/stores.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import { tempFolder } from "../support/temp-folder.js";

const PEOPLE = [
  { team: "T1", user: "U0ALICE", token: "pat-alice-0123456789" },
  { team: "T1", user: "U0BOB", token: "pat-bob-9876543210" },
];

describe("key rotation", () => {
  it("seals every token again under the new key, which alone opens them afterwards", () => {
    const stores = memoryStores();
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = new TokenVault({ key: oldKey, store: stores.linkedTokens });
    for (const p of PEOPLE) before.link(p, p.token);
    expect(rotateTokenKey(stores.linkedTokens, oldKey, newKey)).toEqual({ rotated: 2, already: 0 });
    const after = new TokenVault({ key: newKey, store: stores.linkedTokens });
    for (const p of PEOPLE) {
      expect(after.tokenOf(p)).toBe(p.token);
      expect(before.tokenOf(p)).toBeUndefined();
    }
    // Run again (say after an interruption): nothing left to do.
    expect(rotateTokenKey(stores.linkedTokens, oldKey, newKey)).toEqual({ rotated: 0, already: 2 });
  });

  it("changes nothing when a token opens under neither key", () => {
    const stores = memoryStores();
    const [oldKey, newKey, stray] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    new TokenVault({ key: oldKey, store: stores.linkedTokens }).link(
      { team: "T1", user: "U0ALICE" },
      "pat-a-123456",
    );
    new TokenVault({ key: stray, store: stores.linkedTokens }).link(
      { team: "T1", user: "U0BOB" },
      "pat-b-123456",
    );
    const sealed = stores.linkedTokens.all().map((t) => t.sealed);
    expect(() => rotateTokenKey(stores.linkedTokens, oldKey, newKey)).toThrow(RotationRefused);
    expect(stores.linkedTokens.all().map((t) => t.sealed)).toEqual(sealed);
  });

  it("moves the installations' bot tokens too, or nothing when one opens under neither key", () => {
    const stores = memoryStores();
    const [oldKey, newKey, stray] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    const install = (team: string, key: Buffer, token: string) =>
      stores.installations.put({
        enterprise: "",
        team,
        teamName: null,
        enterpriseName: null,
        appId: null,
        botUserId: "UBOT",
        botId: "BBOT",
        botScopes: [],
        sealedBotToken: sealBotToken(key, { enterprise: "", team }, token),
        installerUserId: null,
      });
    new TokenVault({ key: oldKey, store: stores.linkedTokens }).link(
      { team: "T1", user: "U0ALICE" },
      "pat-a-1",
    );
    install("T1", oldKey, "xoxb-one");
    install("T2", stray, "xoxb-two");
    const before = stores.installations.list().map((i) => i.sealedBotToken);
    expect(() => rotateAllKeys(stores, oldKey, newKey)).toThrow(RotationRefused);
    expect(stores.installations.list().map((i) => i.sealedBotToken)).toEqual(before);
    expect(stores.linkedTokens.all()).toHaveLength(1);

    install("T2", oldKey, "xoxb-two");
    expect(rotateAllKeys(stores, oldKey, newKey)).toEqual({
      linked: { rotated: 1, already: 0 },
      bots: { rotated: 2, already: 0 },
    });
    const opened = stores.installations
      .list()
      .map((i) => openBotToken(newKey, i, i.sealedBotToken));
    expect(opened).toEqual(["xoxb-one", "xoxb-two"]);
  });

  it("runs as `npm run rotate-key` on the database file, printing counts and never a token", () => {
    const path = join(tempFolder("rotate-"), "bridge.db");
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const stores = openSqliteStores(path);
    const vault = new TokenVault({ key: oldKey, store: stores.linkedTokens });
    for (const p of PEOPLE) vault.link(p, p.token);
    stores.close();

    const env = {
      DATABASE_PATH: path,
      TOKEN_ENCRYPTION_KEY: oldKey.toString("base64"),
      NEW_TOKEN_ENCRYPTION_KEY: newKey.toString("base64"),
    };
    const done = runRotation(env);
    expect(done).toEqual({
      code: 0,
      line: "Sealed 2 linked token(s) under the new key (0 already were). Now set TOKEN_ENCRYPTION_KEY to the new key and start the bot.",
    });
    const reopened = openSqliteStores(path);
    const rotated = new TokenVault({ key: newKey, store: reopened.linkedTokens });
    expect(PEOPLE.map((p) => rotated.tokenOf(p))).toEqual(PEOPLE.map((p) => p.token));
    reopened.close();
  });

  it("refuses missing, malformed or unchanged keys with one sentence naming the variable", () => {
    const key = randomBytes(32).toString("base64");
    expect(runRotation({ TOKEN_ENCRYPTION_KEY: key })).toEqual({
      code: 2,
      line: "Configuration error: NEW_TOKEN_ENCRYPTION_KEY is required but not set.",
    });
    expect(
      runRotation({ TOKEN_ENCRYPTION_KEY: "nope", NEW_TOKEN_ENCRYPTION_KEY: key }).line,
    ).toMatch(/^Configuration error: TOKEN_ENCRYPTION_KEY is malformed/);
    expect(
      runRotation({ TOKEN_ENCRYPTION_KEY: key, NEW_TOKEN_ENCRYPTION_KEY: key }).line,
    ).toContain("is the same key as TOKEN_ENCRYPTION_KEY");
  });
});
