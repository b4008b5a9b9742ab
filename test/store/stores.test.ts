import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryStores } from "../../src/store/memory/stores.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import type { Stores } from "../../src/store/stores.js";
import { IllegalTransition } from "../../src/store/turn.js";
import { postgresStores } from "../support/postgres.js";

/** One suite, every implementation: what the core relies on means the same in each. */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const clean of cleanups.splice(0)) clean();
});

/** Each opens the stores on a clock: `now`, epoch ms (default: always 1_000). */
const implementations: [string, (now?: () => number) => Stores][] = [
  ["memory", (now = () => 1_000) => memoryStores(now)],
  [
    "sqlite",
    (now = () => 1_000) => {
      const dir = mkdtempSync(join(tmpdir(), "stores-"));
      const stores = openSqliteStores(join(dir, "bridge.db"), now);
      cleanups.push(() => {
        stores.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return stores;
    },
  ],
  ["postgres", (now = () => 1_000) => postgresStores(now)],
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
    expect(c).toMatchObject({
      assistantId: "asst",
      serviceThreadId: null,
      serviceThreadOwner: null,
      passedThroughTs: null,
    });
    expect(conversations.setServiceThread(c.id, "th-1", "U1")).toEqual({
      ...c,
      serviceThreadId: "th-1",
      serviceThreadOwner: "U1",
    });
    // The first one stays, and is what the second is answered with.
    expect(conversations.setServiceThread(c.id, "th-2", "shared")?.serviceThreadId).toBe("th-1");
    conversations.setPassedThrough(c.id, "1.5");
    expect(conversations.byId(c.id)).toMatchObject({
      serviceThreadId: "th-1",
      serviceThreadOwner: "U1",
      passedThroughTs: "1.5",
    });
    expect(conversations.byServiceThread("th-1")?.serviceThreadOwner).toBe("U1");
    // Who opened it may not be known (a service port that does not say): null, as before.
    const other = conversations.ensure({ ...KEY, threadTs: "3.3" }, "asst");
    conversations.setServiceThread(other.id, "th-3", null);
    expect(conversations.byId(other.id)).toMatchObject({
      serviceThreadId: "th-3",
      serviceThreadOwner: null,
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
      replyPostsAttempted: 0,
      createdAt: 1_000,
    });
    expect(newTurn(stores, "1.1")).toBeUndefined();
    expect(stores.turns.byMessage("T", "C", "1.1")?.id).toBe(turn?.id);
  });

  it("keeps the asking person's organisation apart from the workspace that keys the turn", () => {
    const stores = open();
    const c = stores.conversations.ensure(KEY, "asst");
    const fields = { conversationId: c.id, ...KEY, user: "U9", content: "q", notes: [] };
    const external = stores.turns.create({ ...fields, messageTs: "2.1", authorTeam: "TPARTNER" });
    expect(external).toMatchObject({ team: "T", authorTeam: "TPARTNER" });
    expect(stores.turns.byMessage("T", "C", "2.1")?.authorTeam).toBe("TPARTNER");
    // A person of the workspace itself: the author's team is the workspace's.
    expect(stores.turns.create({ ...fields, messageTs: "2.2" })?.authorTeam).toBe("T");
  });

  it("lists the conversations a person asked in, in their workspace only, each once", () => {
    const stores = open();
    const { conversations, turns } = stores;
    const ask = (key: typeof KEY, messageTs: string, user: string) => {
      const c = conversations.ensure(key, "asst");
      turns.create({ conversationId: c.id, ...key, messageTs, user, content: "q", notes: [] });
      return c.id;
    };
    const first = ask(KEY, "1.1", "U1");
    ask(KEY, "1.2", "U1");
    const others = ask({ ...KEY, threadTs: "2.2" }, "2.2", "U2");
    ask({ ...KEY, threadTs: "2.2" }, "2.3", "U2");
    const joined = ask({ ...KEY, threadTs: "2.2" }, "2.4", "U1");
    ask({ ...KEY, team: "T2", threadTs: "3.3" }, "3.3", "U1");
    expect(joined).toBe(others);
    expect(turns.conversationsAskedIn("T", "U1").sort((a, b) => a - b)).toEqual([first, others]);
    expect(turns.conversationsAskedIn("T", "U2")).toEqual([others]);
    expect(turns.conversationsAskedIn("T", "U3")).toEqual([]);
    // Finished turns count: the Home lists past conversations.
    const turn = turns.byMessage("T", "C", "1.1") as { id: string };
    turns.finish(turn.id, { outcome: "completed" });
    expect(turns.conversationsAskedIn("T", "U1")).toContain(first);
  });

  it("keeps the first stop asked for an unfinished turn through its transitions, none for a finished one", () => {
    const stores = open();
    const id = newTurn(stores, "1.1")?.id ?? "";
    expect(stores.turns.byId(id)?.stopRequestedBy).toBeNull();
    expect(stores.turns.requestStop(id, "U1")).toBe(true);
    expect(stores.turns.requestStop(id, "U2")).toBe(true);
    const composed = stores.turns.recordContent(id, {
      serviceContent: "q",
      contextThroughTs: null,
      notes: [],
    });
    expect(composed.stopRequestedBy).toBe("U1");
    expect(stores.turns.byId(id)?.stopRequestedBy).toBe("U1");
    stores.turns.finish(id, { outcome: "stopped" });
    expect(stores.turns.requestStop(id, "U1")).toBe(false);
    expect(stores.turns.requestStop("no-such-turn", "U1")).toBe(false);
  });

  it("moves a turn through every state and keeps what each transition recorded", () => {
    const stores = open();
    const { turns } = stores;
    const id = newTurn(stores, "1.1")?.id as string;
    turns.recordReplyAttempt(id, 0);
    turns.recordReply(id, ["9.1"]);
    turns.recordReplyAttempt(id, 1);
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
      replyPostsAttempted: 2,
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

  it("purges the texts of turns finished before a time, and still knows their messages", () => {
    let now = 1_000;
    const stores = open(() => now);
    const { turns } = stores;
    const old = newTurn(stores, "1.1")?.id as string;
    const waiting = newTurn(stores, "1.2")?.id as string;
    turns.recordContent(old, { serviceContent: "ctx q", contextThroughTs: "1.1", notes: ["n"] });
    turns.recordPostAttempt(old);
    turns.recordMessage(old, "m-old");
    turns.finish(old, { outcome: "failed", modelUsed: "max", error: "it broke" });
    now = 5_000;
    const recent = newTurn(stores, "1.3")?.id as string;
    turns.finish(recent, { outcome: "completed" });

    expect(turns.purgeTexts(5_000, 10)).toBe(1);
    expect(turns.byId(old)).toMatchObject({
      state: "finished",
      outcome: "failed",
      modelUsed: "max",
      messageTs: "1.1",
      serviceMessageId: "m-old",
      content: "",
      serviceContent: null,
      notes: [],
      error: null,
    });
    // Turns still running, and those finished since, keep their texts however old they are.
    expect(turns.byId(waiting)).toMatchObject({ content: "question 1.2", notes: ["files"] });
    expect(turns.byId(recent)).toMatchObject({ content: "question 1.3", notes: ["files"] });
    // A Slack retry of the purged message is still the same message: no second turn.
    expect(newTurn(stores, "1.1")).toBeUndefined();
    expect(turns.byMessage("T", "C", "1.1")?.id).toBe(old);
    expect(turns.serviceMessageIds(1)).toEqual(new Set(["m-old"]));
    expect(turns.purgeTexts(5_000, 10)).toBe(0);
  });

  it("purges at most the number asked for, the longest finished first", () => {
    let now = 1_000;
    const stores = open(() => now);
    const { turns } = stores;
    const ids = ["1.1", "1.2", "1.3"].map((ts) => newTurn(stores, ts)?.id as string);
    for (const id of [...ids].reverse()) {
      turns.finish(id, { outcome: "completed" });
      now += 1_000;
    }
    expect(turns.purgeTexts(now, 2)).toBe(2);
    expect(ids.map((id) => turns.byId(id)?.content)).toEqual(["question 1.1", "", ""]);
    expect(turns.purgeTexts(now, 2)).toBe(1);
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

  it("keeps each person's latest feedback on a turn, with when they pressed", () => {
    let now = 1_000;
    const { feedback } = open(() => now);
    expect(feedback.forTurn("turn-a")).toEqual([]);
    expect(feedback.record("turn-a", "U1", "positive")).toEqual({
      turnId: "turn-a",
      user: "U1",
      value: "positive",
      at: 1_000,
    });
    now = 2_000;
    feedback.record("turn-a", "U2", "positive");
    feedback.record("turn-b", "U1", "negative");
    now = 3_000;
    // U1 changes their mind: one row, the latest press and its time.
    expect(feedback.record("turn-a", "U1", "negative")).toMatchObject({ at: 3_000 });
    expect(feedback.forTurn("turn-a")).toEqual([
      { turnId: "turn-a", user: "U2", value: "positive", at: 2_000 },
      { turnId: "turn-a", user: "U1", value: "negative", at: 3_000 },
    ]);
    expect(feedback.forTurn("turn-b")).toEqual([
      { turnId: "turn-b", user: "U1", value: "negative", at: 2_000 },
    ]);
  });

  it("deletes feedback pressed before a time, the oldest first, at most the number asked for", () => {
    let now = 1_000;
    const { feedback } = open(() => now);
    for (const user of ["U1", "U2", "U3"]) {
      feedback.record("turn-a", user, "positive");
      now += 1_000;
    }
    // U1 pressed again since: their press is now the newest.
    feedback.record("turn-a", "U1", "negative");
    expect(feedback.purge(4_000, 1)).toBe(1);
    expect(feedback.forTurn("turn-a").map((f) => f.user)).toEqual(["U3", "U1"]);
    expect(feedback.purge(4_000, 10)).toBe(1);
    expect(feedback.forTurn("turn-a")).toEqual([
      { turnId: "turn-a", user: "U1", value: "negative", at: 4_000 },
    ]);
    expect(feedback.purge(4_000, 10)).toBe(0);
  });

  it("lists a conversation's unfinished turns in arrival order, also within one millisecond", () => {
    const stores = open();
    const { turns } = stores;
    // The clock stands still: every turn arrives at 1_000, and order is arrival alone.
    const first = newTurn(stores, "1.1")?.id as string;
    const second = newTurn(stores, "1.2")?.id as string;
    const elsewhere = stores.conversations.ensure({ ...KEY, threadTs: "2.2" }, "asst");
    stores.turns.create({
      conversationId: elsewhere.id,
      ...KEY,
      messageTs: "2.2",
      user: "U1",
      content: "q",
      notes: [],
    });
    const third = newTurn(stores, "1.3")?.id as string;
    turns.finish(first, { outcome: "completed" });
    const conversation = stores.conversations.find(KEY)?.id as number;
    expect(turns.unfinishedIn(conversation).map((t) => t.id)).toEqual([second, third]);
    expect(turns.unfinishedIn(elsewhere.id)).toHaveLength(1);
    expect(turns.unfinishedIn(9_999)).toEqual([]);
    // Several conversations in one read: by conversation, each in arrival order.
    expect(turns.unfinishedInAny([elsewhere.id, 9_999, conversation]).map((t) => t.id)).toEqual([
      second,
      third,
      turns.unfinishedIn(elsewhere.id)[0]?.id,
    ]);
    expect(turns.unfinishedInAny([elsewhere.id]).map((t) => t.conversationId)).toEqual([
      elsewhere.id,
    ]);
    expect(turns.unfinishedInAny([])).toEqual([]);
  });

  it("leases a conversation to one holder at a time, renewed by its claims, until it expires", () => {
    let now = 1_000;
    const stores = open(() => now);
    const { leases } = stores;
    const id = stores.conversations.ensure(KEY, "asst").id;
    expect(leases.claim(id, "r1", 500)).toBe("claimed");
    expect(leases.claim(id, "r2", 500)).toBe("refused");
    now = 1_400;
    // The holder claiming again renews: live until 1_900 now.
    expect(leases.claim(id, "r1", 500)).toBe("claimed");
    now = 1_800;
    expect(leases.claim(id, "r2", 500)).toBe("refused");
    expect(leases.heldBy("r1")).toBe(1);
    now = 1_900;
    // Expired (its expiry is not after now): another holder takes it over.
    expect(leases.heldBy("r1")).toBe(0);
    expect(leases.claim(id, "r2", 500)).toBe("taken_over");
    expect(leases.heldBy("r2")).toBe(1);
    expect(leases.claim(id, "r1", 500)).toBe("refused");
    // An expired lease claimed again by its own holder is simply claimed.
    now = 3_000;
    expect(leases.claim(id, "r2", 500)).toBe("claimed");
  });

  it("renews every lease a holder still has, one expired that nobody took included", () => {
    let now = 1_000;
    const stores = open(() => now);
    const { leases, conversations } = stores;
    const [a, b, c] = ["1.1", "2.2", "3.3"].map(
      (threadTs) => conversations.ensure({ ...KEY, threadTs }, "asst").id,
    ) as [number, number, number];
    leases.claim(a, "r1", 100);
    leases.claim(b, "r1", 1_000);
    leases.claim(c, "r2", 1_000);
    now = 1_500;
    expect(leases.renew("r1", 1_000)).toEqual([a, b]);
    expect(leases.heldBy("r1")).toBe(2);
    expect(leases.claim(a, "r2", 100)).toBe("refused");
    now = 2_400;
    expect(leases.claim(a, "r2", 100)).toBe("refused");
    expect(leases.renew("r3", 1_000)).toEqual([]);
  });

  it("gives a lease back only from its holder, one at a time or all at once", () => {
    const stores = open();
    const { leases, conversations } = stores;
    const [a, b, c] = ["1.1", "2.2", "3.3"].map(
      (threadTs) => conversations.ensure({ ...KEY, threadTs }, "asst").id,
    ) as [number, number, number];
    leases.claim(a, "r1", 1_000);
    leases.claim(b, "r1", 1_000);
    leases.claim(c, "r2", 1_000);
    leases.release(a, "r2");
    expect(leases.claim(a, "r2", 1_000)).toBe("refused");
    leases.release(a, "r1");
    // Free again: claimed, not taken over (nobody held it).
    expect(leases.claim(a, "r2", 1_000)).toBe("claimed");
    expect(leases.releaseAll("r1")).toBe(1);
    expect(leases.heldBy("r1")).toBe(0);
    expect(leases.releaseAll("r1")).toBe(0);
    expect(leases.heldBy("r2")).toBe(2);
    expect(leases.claim(b, "r3", 1_000)).toBe("claimed");
  });

  it("finds the conversations with unfinished turns and no live lease, the longest waiting first", () => {
    let now = 1_000;
    const stores = open(() => now);
    const { conversations, turns, leases } = stores;
    const ask = (threadTs: string, messageTs: string) => {
      const c = conversations.ensure({ ...KEY, threadTs }, "asst");
      const turn = turns.create({
        conversationId: c.id,
        ...KEY,
        threadTs,
        messageTs,
        user: "U1",
        content: "q",
        notes: [],
      });
      return { conversation: c.id, turn: turn?.id as string };
    };
    const a = ask("1.1", "1.1");
    now = 2_000;
    const b = ask("2.2", "2.2");
    now = 3_000;
    const c = ask("3.3", "3.3");
    const done = ask("4.4", "4.4");
    turns.finish(done.turn, { outcome: "completed" });
    now = 3_500;
    ask("1.1", "1.2");
    expect(leases.unattended(10)).toEqual([a.conversation, b.conversation, c.conversation]);
    // A's oldest unfinished turn is now its second, the newest of all.
    turns.finish(a.turn, { outcome: "completed" });
    expect(leases.unattended(10)).toEqual([b.conversation, c.conversation, a.conversation]);
    // A live lease means someone runs it; an expired one does not.
    leases.claim(b.conversation, "r1", 1_000);
    expect(leases.unattended(10)).toEqual([c.conversation, a.conversation]);
    expect(leases.unattended(1)).toEqual([c.conversation]);
    now = 4_500;
    expect(leases.unattended(10)).toEqual([b.conversation, c.conversation, a.conversation]);
  });
});
