import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConversationStore } from "../../src/store/conversations.js";
import { openDatabase } from "../../src/store/db.js";
import { SettingsStore } from "../../src/store/settings.js";
import { TurnStore } from "../../src/store/turns.js";
import { tempFolder } from "../support/temp-folder.js";

const tempDb = () => join(tempFolder("bridge-store-"), "nested", "bridge.db");

describe("store", () => {
  it("creates the file in WAL mode and keeps data across reopen", () => {
    const path = tempDb();
    const db = openDatabase(path);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    const conversations = new ConversationStore(db);
    const c = conversations.ensure({ team: "T", channel: "C", threadTs: "1.1" }, "asst");
    conversations.setServiceThread(c.id, "thread-1");
    db.close();
    const again = new ConversationStore(openDatabase(path));
    expect(again.find({ team: "T", channel: "C", threadTs: "1.1" })).toMatchObject({
      assistantId: "asst",
      serviceThreadId: "thread-1",
    });
  });

  it("records one turn per Slack message and tracks its state", () => {
    const db = openDatabase(":memory:");
    const c = new ConversationStore(db).ensure(
      { team: "T", channel: "C", threadTs: "1.1" },
      "asst",
    );
    const turns = new TurnStore(db);
    const input = {
      conversationId: c.id,
      team: "T",
      channel: "C",
      threadTs: "1.1",
      messageTs: "1.1",
      user: "U1",
      content: "hello",
      notes: [],
    };
    const turn = turns.create(input);
    expect(turn?.state).toBe("received");
    expect(turns.create(input)).toBeUndefined();
    turns.update(turn?.id as string, {
      runId: "r1",
      state: "run_started",
      replyParts: ["9.9"],
      settings: { maxSteps: 3 },
    });
    expect(turns.unfinished().map((t) => [t.runId, t.state, t.replyParts, t.settings])).toEqual([
      ["r1", "run_started", ["9.9"], { maxSteps: 3 }],
    ]);
    expect(turns.activeFor("T", "C", "U1")).toHaveLength(1);
    turns.update(turn?.id as string, { state: "finished", outcome: "completed" });
    expect(turns.unfinished()).toEqual([]);
    expect(turns.activeFor("T", "C", "U1")).toEqual([]);
  });

  it("keeps settings per person per channel, and default removes one", () => {
    const settings = new SettingsStore(openDatabase(":memory:"));
    const key = { team: "T", channel: "C", user: "U1" };
    expect(settings.get(key)).toEqual({});
    settings.update(key, { modelOverride: "max", maxSteps: 12 });
    expect(settings.get(key)).toEqual({ modelOverride: "max", maxSteps: 12 });
    expect(settings.get({ ...key, channel: "C2" })).toEqual({});
    expect(settings.get({ ...key, user: "U2" })).toEqual({});
    settings.update(key, { modelOverride: null, reasoning_effort: "low" });
    expect(settings.get(key)).toEqual({ reasoning_effort: "low", maxSteps: 12 });
  });

  it("fails with a clear error when the file cannot be opened", () => {
    // A regular file where a folder should be: nothing can be created beneath it.
    const dir = tempFolder("bridge-store-");
    const blocker = join(dir, "not-a-folder");
    writeFileSync(blocker, "x");
    expect(() => openDatabase(join(blocker, "bridge.db"))).toThrow(
      /^Cannot open the database at .*not-a-folder\/bridge\.db: /,
    );
  });
});
