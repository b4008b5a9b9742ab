import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/sqlite/db.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const tempDir = () => {
  dir = mkdtempSync(join(tmpdir(), "sqlite-store-"));
  return dir;
};

describe("the SQLite file", () => {
  it("is created in WAL mode, beneath missing folders, and keeps data across reopen", async () => {
    const path = join(tempDir(), "nested", "bridge.db");
    const db = openDatabase(path);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
    const first = openSqliteStores(path);
    const c = await first.conversations.ensure(
      { team: "T", channel: "C", threadTs: "1.1" },
      "asst",
    );
    await first.conversations.setServiceThread(c.id, "thread-1", "U1");
    await first.close();
    const again = openSqliteStores(path);
    expect(
      await again.conversations.find({ team: "T", channel: "C", threadTs: "1.1" }),
    ).toMatchObject({
      assistantId: "asst",
      serviceThreadId: "thread-1",
      serviceThreadOwner: "U1",
    });
    await again.close();
  });

  it("commits without syncing on the event loop (synchronous NORMAL), and syncs its log when a caller needs it", async () => {
    const path = join(tempDir(), "bridge.db");
    const db = openDatabase(path);
    // 1 is NORMAL (0 OFF, 2 FULL, 3 EXTRA): the log is synced by WalSync, off the thread.
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    db.close();
    const stores = openSqliteStores(path);
    await stores.conversations.ensure({ team: "T", channel: "C", threadTs: "1.1" }, "asst");
    await expect(stores.durable()).resolves.toBeUndefined();
    await stores.close();
  });

  it("refuses a database whose schema is newer than the code, naming both versions", () => {
    const path = join(tempDir(), "bridge.db");
    const current = openDatabase(path);
    const known = current.pragma("user_version", { simple: true }) as number;
    current.pragma(`user_version = ${known + 1}`);
    current.close();
    expect(() => openDatabase(path)).toThrow(
      `Cannot open the database at ${path}: its schema is version ${known + 1}, but this version of the bot knows versions up to ${known}: the file was written by a newer release of the bot.`,
    );
    // Refused without touching it.
    const after = new Database(path, { readonly: true });
    expect(after.pragma("user_version", { simple: true })).toBe(known + 1);
    after.close();
  });

  it("fails with a clear error when the file cannot be opened", () => {
    // A regular file where a folder should be: nothing can be created beneath it.
    const blocker = join(tempDir(), "not-a-folder");
    writeFileSync(blocker, "x");
    expect(() => openDatabase(join(blocker, "bridge.db"))).toThrow(
      /^Cannot open the database at .*not-a-folder\/bridge\.db: /,
    );
  });

  it("carries turns of the previous schema into the state machine's states", () => {
    const path = join(tempDir(), "bridge.db");
    const old = new Database(path);
    // The columns and indexes of version 4 that the later migrations touch.
    old.exec(`CREATE TABLE turns (id TEXT PRIMARY KEY, state TEXT NOT NULL, content TEXT NOT NULL,
      service_content TEXT, post_attempted INTEGER NOT NULL DEFAULT 0,
      conversation_id INTEGER NOT NULL DEFAULT 1, team TEXT NOT NULL DEFAULT 'T',
      channel TEXT NOT NULL DEFAULT 'C', user TEXT NOT NULL DEFAULT 'U',
      service_message_id TEXT, created_at INTEGER NOT NULL DEFAULT 0,
      updated_at INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX turns_unfinished ON turns (state) WHERE state <> 'finished';
      CREATE INDEX turns_by_user ON turns (team, channel, user, state);
      CREATE TABLE conversations (id INTEGER PRIMARY KEY, service_thread_id TEXT);`);
    old.pragma("user_version = 4");
    old.exec(`INSERT INTO turns (id, state, content, service_content, post_attempted)
      VALUES ('sent', 'received', 'q1', NULL, 1),
      ('composed', 'received', 'q2', 'ctx q2', 0), ('fresh', 'received', 'q3', NULL, 0),
      ('later', 'run_started', 'q4', 'q4', 1)`);
    old.close();
    const db = openDatabase(path);
    expect(db.prepare("SELECT id, state, service_content FROM turns ORDER BY id").all()).toEqual([
      { id: "composed", state: "composed", service_content: "ctx q2" },
      { id: "fresh", state: "received", service_content: null },
      { id: "later", state: "run_started", service_content: "q4" },
      { id: "sent", state: "posting", service_content: "q1" },
    ]);
    db.close();
  });

  it("reads a conversation opened before owners were recorded as owned by nobody known", async () => {
    const path = join(tempDir(), "bridge.db");
    const first = openSqliteStores(path);
    const c = await first.conversations.ensure(
      { team: "T", channel: "C", threadTs: "1.1" },
      "asst",
    );
    await first.conversations.setServiceThread(c.id, "thread-1", "U1");
    await first.close();
    const db = openDatabase(path);
    // What the migration leaves on a conversation of an earlier version.
    db.exec("UPDATE conversations SET service_thread_owner = NULL");
    db.close();
    const again = openSqliteStores(path);
    expect(await again.conversations.byId(c.id)).toMatchObject({
      serviceThreadId: "thread-1",
      serviceThreadOwner: null,
    });
    await again.close();
  });

  it("reads turns recorded before the author's team was kept as asked from their own team", async () => {
    const path = join(tempDir(), "bridge.db");
    const first = openSqliteStores(path, () => 1_000);
    await first.turns.record({
      assistant: "asst",
      team: "T",
      channel: "C",
      threadTs: "1.1",
      messageTs: "1.1",
      user: "U1",
      content: "q",
      notes: [],
    });
    await first.close();
    const db = openDatabase(path);
    db.exec("UPDATE turns SET author_team = NULL");
    db.close();
    const again = openSqliteStores(path, () => 2_000);
    expect((await again.turns.byMessage("T", "C", "1.1"))?.authorTeam).toBe("T");
    await again.close();
  });
});
