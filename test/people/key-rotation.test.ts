import { randomBytes } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { RotationRefused, rotateAllKeys, rotateTokenKey } from "../../src/people/key-rotation.js";
import { runRotation } from "../../src/people/rotate-key.js";
import { TokenVault } from "../../src/people/token-vault.js";
import { openBotToken, sealBotToken } from "../../src/slack/installations/bot-token-seal.js";
import { memoryStores } from "../../src/store/in-memory.js";
import { openPostgresStores } from "../../src/store/postgres/open.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import { DatabaseInUse, type Stores } from "../../src/store/stores.js";
import { adminQuery } from "../../tools/throwaway-postgres.js";
import { postgresUrl, testDatabase, testSchema } from "../support/postgres.js";
import { tempFolder } from "../support/temp-folder.js";

const PEOPLE = [
  { team: "T1", user: "U0ALICE", token: "pat-alice-0123456789" },
  { team: "T1", user: "U0BOB", token: "pat-bob-9876543210" },
];

describe("key rotation", () => {
  it("seals every token again under the new key, which alone opens them afterwards", async () => {
    const stores = memoryStores();
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = new TokenVault({ key: oldKey, store: stores.linkedTokens });
    for (const p of PEOPLE) await before.link(p, p.token);
    expect(await rotateTokenKey(stores.linkedTokens, oldKey, newKey)).toEqual({
      rotated: 2,
      already: 0,
    });
    const after = new TokenVault({ key: newKey, store: stores.linkedTokens });
    for (const p of PEOPLE) {
      expect(await after.tokenOf(p)).toBe(p.token);
      expect(await before.tokenOf(p)).toBeUndefined();
    }
    // Run again (say after an interruption): nothing left to do.
    expect(await rotateTokenKey(stores.linkedTokens, oldKey, newKey)).toEqual({
      rotated: 0,
      already: 2,
    });
  });

  it("changes nothing when a token opens under neither key", async () => {
    const stores = memoryStores();
    const [oldKey, newKey, stray] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    await new TokenVault({ key: oldKey, store: stores.linkedTokens }).link(
      { team: "T1", user: "U0ALICE" },
      "pat-a-123456",
    );
    await new TokenVault({ key: stray, store: stores.linkedTokens }).link(
      { team: "T1", user: "U0BOB" },
      "pat-b-123456",
    );
    const sealed = (await stores.linkedTokens.all()).map((t) => t.sealed);
    await expect(rotateTokenKey(stores.linkedTokens, oldKey, newKey)).rejects.toThrow(
      RotationRefused,
    );
    expect((await stores.linkedTokens.all()).map((t) => t.sealed)).toEqual(sealed);
  });

  it("moves the installations' bot tokens too, or nothing when one opens under neither key", async () => {
    const stores = memoryStores();
    const [oldKey, newKey, stray] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    const install = async (team: string, key: Buffer, token: string) =>
      await installWith(stores, team, key, token);
    await new TokenVault({ key: oldKey, store: stores.linkedTokens }).link(
      { team: "T1", user: "U0ALICE" },
      "pat-a-1",
    );
    await install("T1", oldKey, "xoxb-one");
    await install("T2", stray, "xoxb-two");
    const before = (await stores.installations.list()).map((i) => i.sealedBotToken);
    await expect(rotateAllKeys(stores, oldKey, newKey)).rejects.toThrow(RotationRefused);
    expect((await stores.installations.list()).map((i) => i.sealedBotToken)).toEqual(before);
    expect(await stores.linkedTokens.all()).toHaveLength(1);

    await install("T2", oldKey, "xoxb-two");
    expect(await rotateAllKeys(stores, oldKey, newKey)).toEqual({
      linked: { rotated: 1, already: 0 },
      bots: { rotated: 2, already: 0 },
    });
    const opened = (await stores.installations.list()).map((i) =>
      openBotToken(newKey, i, i.sealedBotToken),
    );
    expect(opened).toEqual(["xoxb-one", "xoxb-two"]);
  });

  it("runs as `npm run rotate-key` on the database file, printing counts and never a token", async () => {
    const path = join(tempFolder("rotate-"), "bridge.db");
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const stores = openSqliteStores(path);
    const vault = new TokenVault({ key: oldKey, store: stores.linkedTokens });
    for (const p of PEOPLE) await vault.link(p, p.token);
    await stores.close();

    const env = {
      DATABASE_PATH: path,
      TOKEN_ENCRYPTION_KEY: oldKey.toString("base64"),
      NEW_TOKEN_ENCRYPTION_KEY: newKey.toString("base64"),
    };
    const done = await runRotation(env);
    expect(done).toEqual({
      code: 0,
      line: "Sealed 2 linked token(s) under the new key (0 already were). Now set TOKEN_ENCRYPTION_KEY to the new key and start the bot.",
    });
    const reopened = openSqliteStores(path);
    const rotated = new TokenVault({ key: newKey, store: reopened.linkedTokens });
    expect(await Promise.all(PEOPLE.map((p) => rotated.tokenOf(p)))).toEqual(
      PEOPLE.map((p) => p.token),
    );
    await reopened.close();
  });

  it("refuses missing, malformed or unchanged keys with one sentence naming the variable", async () => {
    const key = randomBytes(32).toString("base64");
    expect(await runRotation({ TOKEN_ENCRYPTION_KEY: key })).toEqual({
      code: 2,
      line: "Configuration error: NEW_TOKEN_ENCRYPTION_KEY is required but not set.",
    });
    expect(
      (await runRotation({ TOKEN_ENCRYPTION_KEY: "nope", NEW_TOKEN_ENCRYPTION_KEY: key })).line,
    ).toMatch(/^Configuration error: TOKEN_ENCRYPTION_KEY is malformed/);
    expect(
      (await runRotation({ TOKEN_ENCRYPTION_KEY: key, NEW_TOKEN_ENCRYPTION_KEY: key })).line,
    ).toContain("is the same key as TOKEN_ENCRYPTION_KEY");
  });
});

/** Where a rotation runs: a SQLite file or a PostgreSQL schema of the test's own. */
interface Place {
  open(now?: () => number): Stores;
  /** From now on every UPDATE of `table` fails (a disk in trouble, say), until the test ends. */
  failUpdatesOf(table: string): Promise<void>;
}

const places: [string, () => Place][] = [
  [
    "sqlite",
    () => {
      const path = join(tempFolder("rotate-"), "bridge.db");
      return {
        open: (now) => openSqliteStores(path, now),
        // The file is locked while stores are open: the caller closes them first.
        failUpdatesOf: async (table) => {
          const db = new Database(path);
          db.exec(`CREATE TRIGGER fail_${table} BEFORE UPDATE ON ${table}
                   BEGIN SELECT RAISE(ABORT, 'disk trouble'); END`);
          db.close();
        },
      };
    },
  ],
  [
    "postgres",
    () => {
      const schema = testSchema();
      return {
        // Not as a bot, as `npm run rotate-key` opens them: a bot's connections hold the
        // replica lock the rotation's transaction must take alone, one its pool opens ahead of
        // need as much as one just closed (until the server lets it go).
        open: (now) => {
          const stores = openPostgresStores(postgresUrl(), now, { schema, bot: false });
          onTestFinished(async () => await stores.close());
          return stores;
        },
        failUpdatesOf: (table) =>
          adminQuery(
            postgresUrl(),
            `CREATE FUNCTION ${schema}.fail_${table}() RETURNS trigger LANGUAGE plpgsql
               AS $$ BEGIN RAISE EXCEPTION 'disk trouble'; END $$;
             CREATE TRIGGER fail_${table} BEFORE UPDATE ON ${schema}.${table}
               FOR EACH ROW EXECUTE FUNCTION ${schema}.fail_${table}()`,
          ),
      };
    },
  ],
];

/** Two people's tokens and two installations' bot tokens, sealed under `key`. */
async function seed(stores: Stores, key: Buffer): Promise<void> {
  const vault = new TokenVault({ key, store: stores.linkedTokens });
  for (const p of PEOPLE) await vault.link(p, p.token);
  for (const team of ["T1", "T2"]) await installWith(stores, team, key, `xoxb-${team}`);
}

/** An installation of `team` whose bot token is sealed under `key`. */
async function installWith(
  stores: Stores,
  team: string,
  key: Buffer,
  token: string,
): Promise<void> {
  await stores.installations.put({
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
}

/** Under which of the keys each token (linked, then bot) opens: "old", "new" or "neither". */
async function keysOpening(stores: Stores, oldKey: Buffer, newKey: Buffer): Promise<string[]> {
  const under = async (open: (key: Buffer) => Promise<string | undefined>) =>
    (await open(oldKey)) !== undefined
      ? "old"
      : (await open(newKey)) !== undefined
        ? "new"
        : "neither";
  const quietly = async (open: () => string) => {
    try {
      return open();
    } catch {
      return undefined;
    }
  };
  const linked = PEOPLE.map((p) =>
    under((key) => new TokenVault({ key, store: stores.linkedTokens }).tokenOf(p)),
  );
  const bots = (await stores.installations.list()).map((i) =>
    under((key) => quietly(() => openBotToken(key, i, i.sealedBotToken))),
  );
  return Promise.all([...linked, ...bots]);
}

describe.each(places)("key rotation on %s", (_name, place) => {
  it("re-seals linked tokens and bot tokens in one transaction: a failure midway moves none", async () => {
    const at = place();
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = at.open();
    await seed(before, oldKey);
    await before.close();
    // The linked tokens are written first; the installations' update then fails.
    await at.failUpdatesOf("installations");

    const stores = at.open();
    await expect(rotateAllKeys(stores, oldKey, newKey)).rejects.toThrow(/disk trouble/);
    expect(await keysOpening(stores, oldKey, newKey)).toEqual(["old", "old", "old", "old"]);
    await stores.close();
  });
});

/** The stores as `npm run rotate-key` opens them (not as a bot), closed once the test ends. */
function rotating(schema: string, now: () => number = () => 1_000) {
  const stores = openPostgresStores(postgresUrl(), now, { schema, bot: false });
  onTestFinished(() => stores.close());
  return stores;
}

describe("key rotation while a bot runs", () => {
  it("on SQLite is refused by the file's lock, and changes nothing", async () => {
    const path = join(tempFolder("rotate-"), "bridge.db");
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const bot = openSqliteStores(path);
    await seed(bot, oldKey);
    const env = {
      DATABASE_PATH: path,
      TOKEN_ENCRYPTION_KEY: oldKey.toString("base64"),
      NEW_TOKEN_ENCRYPTION_KEY: newKey.toString("base64"),
    };
    const refused = await runRotation(env);
    expect(refused.code).toBe(1);
    expect(refused.line).toMatch(
      /^Key rotation failed: Cannot open the database at .*bridge\.db: database is locked \(another process holds it: is another copy of the bot running on this file\?\)$/,
    );
    expect(await keysOpening(bot, oldKey, newKey)).toEqual(["old", "old", "old", "old"]);
    await bot.close();
    expect((await runRotation(env)).code).toBe(0);
  }, 20_000);

  it("on PostgreSQL is refused while any replica is connected, idle or not, and changes nothing", async () => {
    const schema = testSchema();
    const open = () => openPostgresStores(postgresUrl(), () => 1_000, { schema });
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const replica = open();
    onTestFinished(() => replica.close());
    await seed(replica, oldKey);
    const rotation = rotating(schema);

    await expect(rotateAllKeys(rotation, oldKey, newKey)).rejects.toThrow(
      new DatabaseInUse("another connection of a bot holds it"),
    );
    expect(await keysOpening(rotation, oldKey, newKey)).toEqual(["old", "old", "old", "old"]);
    await replica.close();
    // The server lets a closed connection's locks go a moment after the client closed it; a
    // refused rotation changes nothing, so asking again until then is safe.
    const rotated = await vi.waitFor(() => rotateAllKeys(rotation, oldKey, newKey), {
      timeout: 10_000,
      interval: 50,
    });
    expect(rotated.linked.rotated).toBe(2);
    expect(await keysOpening(rotation, oldKey, newKey)).toEqual(["new", "new", "new", "new"]);
  });

  it("on PostgreSQL is refused while a conversation lease is live, even with its replica gone", async () => {
    const schema = testSchema();
    let now = 1_000;
    const open = () => openPostgresStores(postgresUrl(), () => now, { schema });
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const replica = open();
    await seed(replica, oldKey);
    const conversation = await replica.conversations.ensure(
      { team: "T1", channel: "C1", threadTs: "1.1" },
      "asst",
    );
    expect(await replica.leases.claim(conversation.id, "replica-1", 15_000)).toBe("claimed");
    // Killed: its connection is gone, its lease runs on until it expires.
    await replica.close();
    const rotation = rotating(schema, () => now);

    await expect(rotateAllKeys(rotation, oldKey, newKey)).rejects.toThrow(
      new DatabaseInUse(
        "1 conversation lease is live; a replica that was killed lets go of its leases within 15 s",
      ),
    );
    expect(await keysOpening(rotation, oldKey, newKey)).toEqual(["old", "old", "old", "old"]);
    now += 15_000;
    expect((await rotateAllKeys(rotation, oldKey, newKey)).bots.rotated).toBe(2);
    expect(await keysOpening(rotation, oldKey, newKey)).toEqual(["new", "new", "new", "new"]);
  });

  it("on PostgreSQL keeps a replica from starting while it runs", async () => {
    const schema = testSchema();
    const open = () => openPostgresStores(postgresUrl(), () => 1_000, { schema });
    const rotation = rotating(schema);
    await rotation.exclusively(async () => {
      const starting = open();
      await expect(starting.opened).rejects.toThrow(
        /cannot connect to PostgreSQL: npm run rotate-key is running on this database; start the bot again once it has finished/,
      );
      await starting.close();
    });
    const started = open();
    await started.opened;
    await started.close();
  });

  it("as `npm run rotate-key` on PostgreSQL says so in one sentence", async () => {
    const url = await testDatabase();
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const replica = openPostgresStores(url);
    onTestFinished(() => replica.close());
    await seed(replica, oldKey);
    const env = {
      DATABASE_URL: url,
      TOKEN_ENCRYPTION_KEY: oldKey.toString("base64"),
      NEW_TOKEN_ENCRYPTION_KEY: newKey.toString("base64"),
    };
    expect(await runRotation(env)).toEqual({
      code: 1,
      line: "Key rotation refused: a bot is still running on this database: stop every replica first (another connection of a bot holds it). Nothing was changed.",
    });
    expect(await keysOpening(replica, oldKey, newKey)).toEqual(["old", "old", "old", "old"]);
    await replica.close();
    expect(await runRotation(env)).toMatchObject({ code: 0 });
  });
});
