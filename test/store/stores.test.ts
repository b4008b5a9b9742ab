import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryStores } from "../../src/store/memory/stores.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import type { Stores } from "../../src/store/stores.js";
import { IllegalTransition } from "../../src/store/turn.js";

/** One suite, every implementation: what the core relies on means the same in each. */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const clean of cleanups.splice(0)) clean();
});

const implementations: [string, () => Stores][] = [
  ["memory", () => memoryStores(() => 1_000)],
  [
    "sqlite",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "stores-"));
      const stores = openSqliteStores(join(dir, "bridge.db"), () => 1_000);
      cleanups.push(() => {
        stores.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return stores;
    },
  ],
];

const KEY = { team: "T", channel: "C", threadTs: "1.1" };

function newTurn(stores: Stores, messageTs: string, user = "U1") {
  const c = stores.conversations.ensure(KEY, "asst");
  return stores.turns.create({
    conversationId: c.id,
    ...KEY,
    messageTs,
    user,
    content: `question ${messageTs}`,
    notes: ["files"],
  });
}

describe.each(implementations)("the %s stores", (_name, open) => {
  it("keeps one conversation per thread, its service thread set once", () => {
    const { conversations } = open();
    const c = conversations.ensure(KEY, "asst");
    expect(conversations.ensure(KEY, "other")).toEqual(c);
    expect(c).toMatchObject({ assistantId: "asst", serviceThreadId: null, passedThroughTs: null });
    conversations.setServiceThread(c.id, "th-1");
    conversations.setServiceThread(c.id, "th-2");
    conversations.setPassedThrough(c.id, "1.5");
    expect(conversations.byId(c.id)).toMatchObject({
      serviceThreadId: "th-1",
      passedThroughTs: "1.5",
    });
    expect(conversations.find({ ...KEY, threadTs: "2.2" })).toBeUndefined();
  });

  it("records one turn per Slack message, as received", () => {
    const stores = open();
    const turn = newTurn(stores, "1.1");
    expect(turn).toMatchObject({
      state: "received",
      notes: ["files"],
      replyParts: [],
      createdAt: 1_000,
    });
    expect(newTurn(stores, "1.1")).toBeUndefined();
    expect(stores.turns.byMessage("T", "C", "1.1")?.id).toBe(turn?.id);
  });

  it("moves a turn through every state and keeps what each transition recorded", () => {
    const stores = open();
    const { turns } = stores;
    const id = newTurn(stores, "1.1")?.id as string;
    turns.recordReplyAttempt(id);
    turns.recordReply(id, ["9.1"]);
    turns.recordContent(id, {
      serviceContent: "ctx q",
      contextThroughTs: "1.1",
      notes: ["a", "b"],
    });
    turns.recordPostAttempt(id);
    turns.recordPostAttempt(id);
    turns.recordMessage(id, "m1");
    turns.recordRunAttempt(id, { maxSteps: 2 });
    expect(turns.recordRunNotStarted(id)).toMatchObject({ state: "message_posted" });
    expect(turns.recordRunAttempt(id, { maxSteps: 3 })).toMatchObject({ state: "run_starting" });
    const started = turns.recordRunStart(id, { runId: "r1", startedAt: 7 });
    expect(turns.byId(id)).toEqual(started);
    expect(started).toMatchObject({
      state: "run_started",
      serviceContent: "ctx q",
      notes: ["a", "b"],
      serviceMessageId: "m1",
      runId: "r1",
      settings: { maxSteps: 3 },
      runStartedAt: 7,
      replyPostAttempted: true,
      replyParts: ["9.1"],
    });
    turns.finish(id, { outcome: "completed", modelUsed: "m-large", error: null });
    expect(turns.byId(id)).toMatchObject({
      state: "finished",
      outcome: "completed",
      modelUsed: "m-large",
    });
  });

  it("refuses an illegal transition and leaves the turn as it was", () => {
    const stores = open();
    const id = newTurn(stores, "1.1")?.id as string;
    expect(() => stores.turns.recordMessage(id, "m1")).toThrow(IllegalTransition);
    stores.turns.finish(id, { outcome: "stopped" });
    expect(() => stores.turns.finish(id, { outcome: "error" })).toThrow(IllegalTransition);
    expect(() => stores.turns.recordReply(id, ["1.2"])).toThrow(IllegalTransition);
    expect(stores.turns.byId(id)).toMatchObject({
      state: "finished",
      outcome: "stopped",
      replyParts: [],
    });
  });

  it("lists unfinished turns in arrival order, per person, and the messages they posted", () => {
    const stores = open();
    const { turns } = stores;
    const a = newTurn(stores, "1.1")?.id as string;
    const b = newTurn(stores, "1.2", "U2")?.id as string;
    const c = newTurn(stores, "1.3")?.id as string;
    turns.recordContent(a, { serviceContent: "q", contextThroughTs: null, notes: [] });
    turns.recordPostAttempt(a);
    turns.recordMessage(a, "m-a");
    turns.finish(a, { outcome: "completed" });
    expect(turns.unfinished().map((t) => t.id)).toEqual([b, c]);
    expect(turns.activeFor("T", "C", "U1").map((t) => t.id)).toEqual([c]);
    expect(turns.unfinishedCountBy("T", "U2")).toBe(1);
    expect(turns.unfinishedCountBy("T", "U3")).toBe(0);
    expect(turns.serviceMessageIds(1)).toEqual(new Set(["m-a"]));
  });

  it("keeps settings per person per channel, and default removes one", () => {
    const { settings } = open();
    const key = { team: "T", channel: "C", user: "U1" };
    expect(settings.get(key)).toEqual({});
    settings.update(key, { modelOverride: "max", maxSteps: 12 });
    expect(settings.get(key)).toEqual({ modelOverride: "max", maxSteps: 12 });
    expect(settings.get({ ...key, channel: "C2" })).toEqual({});
    expect(settings.get({ ...key, user: "U2" })).toEqual({});
    expect(settings.update(key, { modelOverride: null, reasoning_effort: "low" })).toEqual({
      reasoning_effort: "low",
      maxSteps: 12,
    });
    expect(settings.get(key)).toEqual({ reasoning_effort: "low", maxSteps: 12 });
  });
});
