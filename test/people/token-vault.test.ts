import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LinkingOff, TokenVault } from "../../src/people/token-vault.js";
import { memoryStores } from "../../src/store/in-memory.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import { tempFolder } from "../support/temp-folder.js";

const ALICE = { team: "T1", user: "U0ALICE" };
const TOKEN = "pat-alice-0123456789abcdef";

describe("the token vault", () => {
  it("links, reads at each call and unlinks a person's token, telling each clear token to the scrubber", async () => {
    const learnt: string[] = [];
    const stores = memoryStores();
    const vault = new TokenVault({
      key: randomBytes(32),
      store: stores.linkedTokens,
      onSecret: (t) => learnt.push(t),
    });
    expect(vault.enabled).toBe(true);
    expect(await vault.tokenOf(ALICE)).toBeUndefined();
    await vault.link(ALICE, TOKEN);
    expect(await vault.tokenOf(ALICE)).toBe(TOKEN);
    expect(await vault.isLinked({ team: "T1", user: "U0BOB" })).toBe(false);
    expect(learnt).toEqual([TOKEN, TOKEN]);
    expect(await vault.unlink(ALICE)).toBe(true);
    expect(await vault.tokenOf(ALICE)).toBeUndefined();
  });

  it("refuses to link without a key, and reads nothing", async () => {
    const stores = memoryStores();
    const vault = new TokenVault({ key: undefined, store: stores.linkedTokens });
    expect(vault.enabled).toBe(false);
    await expect(vault.link(ALICE, TOKEN)).rejects.toThrow(LinkingOff);
    expect(await stores.linkedTokens.all()).toEqual([]);
  });

  it("treats a token sealed under another key as not linked, and says so", async () => {
    const stores = memoryStores();
    await new TokenVault({ key: randomBytes(32), store: stores.linkedTokens }).link(ALICE, TOKEN);
    const broken: unknown[] = [];
    const vault = new TokenVault({
      key: randomBytes(32),
      store: stores.linkedTokens,
      onBroken: (owner) => broken.push(owner),
    });
    expect(await vault.tokenOf(ALICE)).toBeUndefined();
    expect(broken).toEqual([ALICE]);
  });

  it("leaves no byte of the token in the SQLite files", async () => {
    const folder = tempFolder("vault-");
    const stores = openSqliteStores(join(folder, "bridge.db"));
    const vault = new TokenVault({ key: randomBytes(32), store: stores.linkedTokens });
    await vault.link(ALICE, TOKEN);
    expect(await vault.tokenOf(ALICE)).toBe(TOKEN);
    const files = () => readdirSync(folder).map((name) => readFileSync(join(folder, name)));
    // While open (the write-ahead log) and once closed (checkpointed into the file).
    for (const bytes of files()) expect(bytes.includes(Buffer.from(TOKEN))).toBe(false);
    await stores.close();
    expect(files().length).toBeGreaterThan(0);
    for (const bytes of files()) expect(bytes.includes(Buffer.from(TOKEN))).toBe(false);
  });
});
