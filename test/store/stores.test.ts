import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryStores } from "../../src/store/in-memory.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import type { Conversation, Stores } from "../../src/store/stores.js";
import { IllegalTransition } from "../../src/store/turn.js";
import { postgresStores } from "../support/postgres.js";

/** One suite, every implementation: what the core relies on means the same in each. */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

/** Each opens the stores on a clock: `now`, epoch ms (default: always 1_000). */
const implementations: [string, (now?: () => number) => Stores][] = [
  ["memory", (now = () => 1_000) => memoryStores(now)],
  [
    "sqlite",
    (now = () => 1_000) => {
      const dir = mkdtempSync(join(tmpdir(), "stores-"));
      const stores = openSqliteStores(join(dir, "bridge.db"), now);
      cleanups.push(async () => {
        await stores.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return stores;
    },
  ],
  ["postgres", (now = () => 1_000) => postgresStores(now)],
];

const KEY = { team: "T", channel: "C", threadTs: "1.1" };

async function newTurn(stores: Stores, messageTs: string, user = "U1") {
  return (
    await stores.turns.record({
      assistant: "asst",
      ...KEY,
      messageTs,
      user,
      content: `question ${messageTs}`,
      files: [SHARED],
      notes: ["files"],
    })
  ).turn;
}

/** A file the question's message carried, as Slack describes it. */
const SHARED = { id: "F1", name: "plan.md", url_private: "https://files.slack.com/F1/plan.md" };

describe.each(implementations)("the %s stores", (_name, open) => {
  it("records a new conversation with the assistant chosen for its place, if still listed", async () => {
    const { conversations, assistantChoices } = open();
    const pick = (scope: "channel" | "person", key: string) => ({
      place: { scope, key },
      listed: ["asst", "asst-legal"],
      otherwise: "asst",
    });
    await assistantChoices.setForChannel("T", "C", "asst-legal");
    await assistantChoices.setForChannel("T", "C-old", "asst-retired");
    await assistantChoices.setForChannel("T-other", "C-elsewhere", "asst-legal");
    await assistantChoices.setForPerson("T", "U1", "asst-legal");
    const at = (channel: string, threadTs: string) => ({ team: "T", channel, threadTs });

    const chosen = await conversations.ensure(at("C", "1.1"), pick("channel", "C"));
    const retired = await conversations.ensure(at("C-old", "1.2"), pick("channel", "C-old"));
    const none = await conversations.ensure(
      at("C-elsewhere", "1.3"),
      pick("channel", "C-elsewhere"),
    );
    const direct = await conversations.ensure(at("D1", "1.4"), pick("person", "U1"));
    expect([chosen, retired, none, direct].map((c) => c.assistantId)).toEqual([
      "asst-legal",
      "asst",
      "asst",
      "asst-legal",
    ]);
    // A conversation keeps the assistant it began with.
    await assistantChoices.setForChannel("T", "C", null);
    expect(await conversations.ensure(at("C", "1.1"), pick("channel", "C"))).toEqual(chosen);
    expect((await conversations.ensure(at("C", "2.1"), pick("channel", "C"))).assistantId).toBe(
      "asst",
    );
  });

  it("keeps one conversation per thread, its service thread set once", async () => {
    const { conversations } = open();
    const c = await conversations.ensure(KEY, "asst");
    expect(await conversations.ensure(KEY, "other")).toEqual(c);
    expect(c).toMatchObject({
      assistantId: "asst",
      serviceThreadId: null,
      serviceThreadOwner: null,
      passedThroughTs: null,
    });
    expect(await conversations.setServiceThread(c.id, "th-1", "U1")).toEqual({
      ...c,
      serviceThreadId: "th-1",
      serviceThreadOwner: "U1",
    });
    // The first one stays, and is what the second is answered with.
    expect((await conversations.setServiceThread(c.id, "th-2", "shared"))?.serviceThreadId).toBe(
      "th-1",
    );
    await conversations.setPassedThrough(c.id, "1.5");
    expect(await conversations.byId(c.id)).toMatchObject({
      serviceThreadId: "th-1",
      serviceThreadOwner: "U1",
      passedThroughTs: "1.5",
    });
    expect((await conversations.byServiceThread("th-1"))?.serviceThreadOwner).toBe("U1");
    // Who opened it may not be known (a service port that does not say): null, as before.
    const other = await conversations.ensure({ ...KEY, threadTs: "3.3" }, "asst");
    await conversations.setServiceThread(other.id, "th-3", null);
    expect(await conversations.byId(other.id)).toMatchObject({
      serviceThreadId: "th-3",
      serviceThreadOwner: null,
    });
    expect(await conversations.find({ ...KEY, threadTs: "2.2" })).toBeUndefined();
  });

  it("records one turn per Slack message, as received", async () => {
    const stores = open();
    const turn = await newTurn(stores, "1.1");
    expect(turn).toMatchObject({
      state: "received",
      notes: ["files"],
      replyParts: [],
      replyPostsAttempted: 0,
      createdAt: 1_000,
    });
    expect(await newTurn(stores, "1.1")).toBeUndefined();
    expect((await stores.turns.byMessage("T", "C", "1.1"))?.id).toBe(turn?.id);
  });

  it("records a question with its thread's conversation, made by the same write when new", async () => {
    const { turns, conversations } = open();
    const ask = (messageTs: string) =>
      turns.record({ assistant: "asst", ...KEY, messageTs, user: "U1", content: "q", notes: [] });
    const first = await ask("1.1");
    expect(first.overLimit).toBe(false);
    expect(first.conversation).toMatchObject({
      ...KEY,
      assistantId: "asst",
      serviceThreadId: null,
    });
    expect(first.turn).toMatchObject({
      conversationId: first.conversation.id,
      messageTs: "1.1",
      state: "received",
      content: "q",
    });
    expect(await conversations.find(KEY)).toEqual(first.conversation);
    // A retry of the message: no second turn, the same conversation.
    const again = await ask("1.1");
    expect(again).toEqual({
      conversation: first.conversation,
      turn: undefined,
      overLimit: false,
      leased: false,
    });
    // A reply in the thread, recorded without the conversation found first.
    const reply = await ask("1.2");
    expect(reply.conversation).toEqual(first.conversation);
    expect(await turns.byId(reply.turn?.id ?? "")).toEqual(reply.turn);
  });

  it("takes the conversation's lease in a question's record only when the turn is its only one unfinished and no lease row is there", async () => {
    let now = 1_000;
    const stores = open(() => now);
    const { turns, leases } = stores;
    const lease = { holder: "r1", ttlMs: 500 };
    await stores.settings.update({ team: "T", channel: "C", user: "U1" }, { maxSteps: 7 });
    const ask = (messageTs: string, options: { threadTs?: string; limit?: number } = {}) =>
      turns.record({
        assistant: "asst",
        ...KEY,
        threadTs: options.threadTs ?? KEY.threadTs,
        messageTs,
        user: "U1",
        content: "q",
        notes: [],
        lease,
        ...(options.limit !== undefined && { limit: options.limit }),
      });
    // A new thread: its conversation, its turn and the lease, live until now + ttl.
    const first = await ask("1.1");
    expect(first.leased).toBe(true);
    // With the lease, the asker's settings in the channel, read by the record.
    expect(first.settings).toEqual({ maxSteps: 7 });
    expect(await leases.heldBy("r1")).toBe(1);
    expect(await leases.claim(first.conversation.id, "r2", 500)).toBe("refused");
    // A redelivery, and a second question while the first is unfinished: nothing taken.
    expect(await ask("1.1")).toMatchObject({ turn: undefined, leased: false });
    const second = await ask("1.2");
    expect(second.turn?.state).toBe("received");
    expect(second.leased).toBe(false);
    expect(second.settings).toBeUndefined();
    // Both finished and the lease given back: the next question takes it again.
    await turns.finish(first.turn?.id ?? "", { outcome: "completed" });
    await turns.finish(second.turn?.id ?? "", { outcome: "completed" });
    expect(await leases.releaseIfDone(first.conversation.id, "r1")).toEqual([]);
    const third = await ask("1.3");
    expect(third.leased).toBe(true);
    expect(third.settings).toEqual({ maxSteps: 7 });
    await turns.finish(third.turn?.id ?? "", { outcome: "completed" });
    // A lease row left there (r2's, expired: a replica that died) is for a claim to take over.
    expect(await leases.releaseIfDone(first.conversation.id, "r1")).toEqual([]);
    expect(await leases.claim(first.conversation.id, "r2", 500)).toBe("claimed");
    now = 2_000;
    const fourth = await ask("1.4");
    expect(fourth.leased).toBe(false);
    expect(await leases.claim(first.conversation.id, "r1", 500)).toBe("taken_over");
    // A question refused at the limit, and one recorded without asking: no lease.
    expect(await ask("2.1", { threadTs: "2.1", limit: 0 })).toMatchObject({
      overLimit: true,
      leased: false,
    });
    const unasked = await turns.record({
      assistant: "asst",
      ...KEY,
      threadTs: "3.1",
      messageTs: "3.1",
      user: "U2",
      content: "q",
      notes: [],
    });
    expect(unasked.leased).toBe(false);
    expect(unasked.settings).toBeUndefined();
    // Someone with no settings of their own: none.
    const theirs = await turns.record({
      assistant: "asst",
      ...KEY,
      threadTs: "4.1",
      messageTs: "4.1",
      user: "U3",
      content: "q",
      notes: [],
      lease,
    });
    expect(theirs).toMatchObject({ leased: true, settings: {} });
    expect(await leases.claim(unasked.conversation.id, "r2", 500)).toBe("claimed");
  });

  it("records a question of an asker at the limit refused: finished, without its text or files", async () => {
    const { turns } = open();
    const ask = (messageTs: string, limit: number, user = "U1") =>
      turns.record({
        assistant: "asst",
        limit,
        ...KEY,
        messageTs,
        user,
        content: `secret ${messageTs}`,
        files: [SHARED],
        notes: [],
      });
    expect((await ask("1.1", 1)).overLimit).toBe(false);
    const refused = await ask("1.2", 1);
    expect(refused.overLimit).toBe(true);
    expect(refused.turn).toMatchObject({
      state: "finished",
      outcome: "error",
      content: "",
      files: [],
    });
    expect(await turns.byId(refused.turn?.id ?? "")).toEqual(refused.turn);
    // Another person has a limit of their own; a retry of the refused message is a duplicate.
    expect((await ask("1.3", 1, "U2")).overLimit).toBe(false);
    expect(await ask("1.2", 1)).toMatchObject({ turn: undefined, overLimit: false });
    // The refused turn is finished, so it does not count: one unfinished turn is under two.
    expect((await ask("1.4", 2)).turn).toMatchObject({ state: "received", content: "secret 1.4" });
  });

  it("keeps the asking person's organisation apart from the workspace that keys the turn", async () => {
    const stores = open();
    const c = await stores.conversations.ensure(KEY, "asst");
    const fields = {
      conversation: c,
      assistant: "asst",
      ...KEY,
      user: "U9",
      content: "q",
      notes: [],
    };
    const external = (
      await stores.turns.record({
        ...fields,
        messageTs: "2.1",
        authorTeam: "TPARTNER",
      })
    ).turn;
    expect(external).toMatchObject({ team: "T", authorTeam: "TPARTNER" });
    expect((await stores.turns.byMessage("T", "C", "2.1"))?.authorTeam).toBe("TPARTNER");
    // A person of the workspace itself: the author's team is the workspace's.
    expect((await stores.turns.record({ ...fields, messageTs: "2.2" })).turn?.authorTeam).toBe("T");
  });

  it("lists the conversations a person asked in, in their workspace only, each once", async () => {
    const stores = open();
    const { conversations, turns } = stores;
    const ask = async (key: typeof KEY, messageTs: string, user: string) => {
      const c = await conversations.ensure(key, "asst");
      (
        await turns.record({
          conversation: c,
          assistant: c.assistantId,
          ...key,
          messageTs,
          user,
          content: "q",
          notes: [],
        })
      ).turn;
      return c.id;
    };
    const first = await ask(KEY, "1.1", "U1");
    await ask(KEY, "1.2", "U1");
    const others = await ask({ ...KEY, threadTs: "2.2" }, "2.2", "U2");
    await ask({ ...KEY, threadTs: "2.2" }, "2.3", "U2");
    const joined = await ask({ ...KEY, threadTs: "2.2" }, "2.4", "U1");
    await ask({ ...KEY, team: "T2", threadTs: "3.3" }, "3.3", "U1");
    expect(joined).toBe(others);
    expect((await turns.conversationsAskedIn("T", "U1")).sort((a, b) => a - b)).toEqual([
      first,
      others,
    ]);
    expect(await turns.conversationsAskedIn("T", "U2")).toEqual([others]);
    expect(await turns.conversationsAskedIn("T", "U3")).toEqual([]);
    // Finished turns count: the Home lists past conversations.
    const turn = (await turns.byMessage("T", "C", "1.1")) as { id: string };
    await turns.finish(turn.id, { outcome: "completed" });
    expect(await turns.conversationsAskedIn("T", "U1")).toContain(first);
  });

  it("keeps the first stop asked for an unfinished turn through its transitions, none for a finished one", async () => {
    const stores = open();
    const id = (await newTurn(stores, "1.1"))?.id ?? "";
    expect((await stores.turns.byId(id))?.stopRequestedBy).toBeNull();
    expect(await stores.turns.requestStop(id, "U1")).toBe(true);
    expect(await stores.turns.requestStop(id, "U2")).toBe(true);
    const composed = await stores.turns.recordContent(id, {
      serviceContent: "q",
      contextThroughTs: null,
      notes: [],
    });
    expect(composed.stopRequestedBy).toBe("U1");
    expect((await stores.turns.byId(id))?.stopRequestedBy).toBe("U1");
    await stores.turns.finish(id, { outcome: "stopped" });
    expect(await stores.turns.requestStop(id, "U1")).toBe(false);
    expect(await stores.turns.requestStop("no-such-turn", "U1")).toBe(false);
  });

  it("fixes a turn's text and records its post's attempt in one write, refused as one", async () => {
    const stores = open();
    const id = (await newTurn(stores, "1.1"))?.id as string;
    const content = { serviceContent: "q", contextThroughTs: "1.0", notes: ["n"] };
    const attempted = await stores.turns.recordContent(id, content, { attempt: true });
    expect(attempted).toMatchObject({ state: "posting", ...content });
    expect(await stores.turns.byId(id)).toMatchObject({ state: "posting", ...content });
    // Neither part is written when the state allows only one of them.
    await expect(
      stores.turns.recordContent(id, { ...content, serviceContent: "again" }, { attempt: true }),
    ).rejects.toThrow(IllegalTransition);
    expect((await stores.turns.byId(id))?.serviceContent).toBe("q");
  });

  it("records a question's message and its run's attempt in one write, refused as one", async () => {
    const stores = open();
    const id = (await newTurn(stores, "1.1"))?.id as string;
    const content = { serviceContent: "q", contextThroughTs: null, notes: [] };
    await stores.turns.recordContent(id, content, { attempt: true });
    const settings = { modelOverride: "max" as const };
    const started = await stores.turns.recordRunAttempt(id, settings, { message: "m1" });
    expect(started).toMatchObject({ state: "run_starting", serviceMessageId: "m1", settings });
    expect(await stores.turns.byId(id)).toMatchObject({
      state: "run_starting",
      serviceMessageId: "m1",
    });
    // Neither part is written when the state allows only one of them.
    await expect(stores.turns.recordRunAttempt(id, settings, { message: "m2" })).rejects.toThrow(
      IllegalTransition,
    );
    expect((await stores.turns.byId(id))?.serviceMessageId).toBe("m1");
  });

  it("moves a turn through every state and keeps what each transition recorded", async () => {
    const stores = open();
    const { turns } = stores;
    const id = (await newTurn(stores, "1.1"))?.id as string;
    await turns.recordReplyAttempt(id, 0);
    await turns.recordReply(id, ["9.1"]);
    await turns.recordReplyAttempt(id, 1);
    await turns.recordContent(id, {
      serviceContent: "ctx q",
      contextThroughTs: "1.1",
      notes: ["a", "b"],
    });
    await turns.recordPostAttempt(id);
    await turns.recordPostAttempt(id);
    await turns.recordMessage(id, "m1");
    await turns.recordRunAttempt(id, { maxSteps: 2 });
    expect(await turns.recordRunNotStarted(id)).toMatchObject({ state: "message_posted" });
    expect(await turns.recordRunAttempt(id, { maxSteps: 3 })).toMatchObject({
      state: "run_starting",
    });
    const started = await turns.recordRunStart(id, { runId: "r1", startedAt: 7 });
    expect(await turns.byId(id)).toEqual(started);
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
    await turns.finish(id, { outcome: "completed", modelUsed: "m-large", error: null });
    expect(await turns.byId(id)).toMatchObject({
      state: "finished",
      outcome: "completed",
      modelUsed: "m-large",
    });
  });

  it("writes the transitions of one turn asked at the same moment one after the other", async () => {
    const stores = open();
    const id = (await newTurn(stores, "1.1"))?.id as string;
    // The reply records its messages while the turn's steps go on: all three must stand.
    await Promise.all([
      stores.turns.recordReplyAttempt(id, 0),
      stores.turns.recordContent(id, { serviceContent: "q", contextThroughTs: null, notes: [] }),
      stores.turns.recordReply(id, ["9.1"]),
    ]);
    expect(await stores.turns.byId(id)).toMatchObject({
      state: "composed",
      serviceContent: "q",
      replyPostsAttempted: 1,
      replyParts: ["9.1"],
    });
  });

  it("refuses an illegal transition and leaves the turn as it was", async () => {
    const stores = open();
    const id = (await newTurn(stores, "1.1"))?.id as string;
    await expect(stores.turns.recordMessage(id, "m1")).rejects.toThrow(IllegalTransition);
    await stores.turns.finish(id, { outcome: "stopped" });
    await expect(stores.turns.finish(id, { outcome: "error" })).rejects.toThrow(IllegalTransition);
    await expect(stores.turns.recordReply(id, ["1.2"])).rejects.toThrow(IllegalTransition);
    expect(await stores.turns.byId(id)).toMatchObject({
      state: "finished",
      outcome: "stopped",
      replyParts: [],
    });
  });

  it("lists unfinished turns in arrival order, per person, and the messages they posted", async () => {
    const stores = open();
    const { turns } = stores;
    const a = (await newTurn(stores, "1.1"))?.id as string;
    const b = (await newTurn(stores, "1.2", "U2"))?.id as string;
    const c = (await newTurn(stores, "1.3"))?.id as string;
    await turns.recordContent(a, { serviceContent: "q", contextThroughTs: null, notes: [] });
    await turns.recordPostAttempt(a);
    await turns.recordMessage(a, "m-a");
    await turns.finish(a, { outcome: "completed" });
    expect((await turns.unfinished()).map((t) => t.id)).toEqual([b, c]);
    expect((await turns.activeFor("T", "C", "U1")).map((t) => t.id)).toEqual([c]);
    expect(await turns.unfinishedCountBy("T", "U2")).toBe(1);
    expect(await turns.unfinishedCountBy("T", "U3")).toBe(0);
    expect(await turns.serviceMessageIds(1)).toEqual(new Set(["m-a"]));
  });

  it("purges the texts of turns finished before a time, and still knows their messages", async () => {
    let now = 1_000;
    const stores = open(() => now);
    const { turns } = stores;
    const old = (await newTurn(stores, "1.1"))?.id as string;
    const waiting = (await newTurn(stores, "1.2"))?.id as string;
    await turns.recordContent(old, {
      serviceContent: "ctx q",
      contextThroughTs: "1.1",
      notes: ["n"],
    });
    await turns.recordPostAttempt(old);
    await turns.recordMessage(old, "m-old");
    await turns.finish(old, { outcome: "failed", modelUsed: "max", error: "it broke" });
    now = 5_000;
    const recent = (await newTurn(stores, "1.3"))?.id as string;
    await turns.finish(recent, { outcome: "completed" });

    expect(await turns.purgeTexts(5_000, 10)).toBe(1);
    expect(await turns.byId(old)).toMatchObject({
      state: "finished",
      outcome: "failed",
      modelUsed: "max",
      messageTs: "1.1",
      serviceMessageId: "m-old",
      content: "",
      files: [],
      serviceContent: null,
      notes: [],
      error: null,
    });
    // Turns still running, and those finished since, keep their texts however old they are.
    expect(await turns.byId(waiting)).toMatchObject({
      content: "question 1.2",
      files: [SHARED],
      notes: ["files"],
    });
    expect(await turns.byId(recent)).toMatchObject({
      content: "question 1.3",
      files: [SHARED],
      notes: ["files"],
    });
    // A Slack retry of the purged message is still the same message: no second turn.
    expect(await newTurn(stores, "1.1")).toBeUndefined();
    expect((await turns.byMessage("T", "C", "1.1"))?.id).toBe(old);
    expect(await turns.serviceMessageIds(1)).toEqual(new Set(["m-old"]));
    expect(await turns.purgeTexts(5_000, 10)).toBe(0);
  });

  it("purges at most the number asked for, the longest finished first", async () => {
    let now = 1_000;
    const stores = open(() => now);
    const { turns } = stores;
    const ids: string[] = [];
    for (const ts of ["1.1", "1.2", "1.3"]) ids.push((await newTurn(stores, ts))?.id as string);
    for (const id of [...ids].reverse()) {
      await turns.finish(id, { outcome: "completed" });
      now += 1_000;
    }
    expect(await turns.purgeTexts(now, 2)).toBe(2);
    const contents = await Promise.all(ids.map(async (id) => (await turns.byId(id))?.content));
    expect(contents).toEqual(["question 1.1", "", ""]);
    expect(await turns.purgeTexts(now, 2)).toBe(1);
  });

  it("keeps settings per person per channel, and default removes one", async () => {
    const { settings } = open();
    const key = { team: "T", channel: "C", user: "U1" };
    expect(await settings.get(key)).toEqual({});
    await settings.update(key, { modelOverride: "max", maxSteps: 12 });
    expect(await settings.get(key)).toEqual({ modelOverride: "max", maxSteps: 12 });
    expect(await settings.get({ ...key, channel: "C2" })).toEqual({});
    expect(await settings.get({ ...key, user: "U2" })).toEqual({});
    expect(await settings.update(key, { modelOverride: null, reasoning_effort: "low" })).toEqual({
      reasoning_effort: "low",
      maxSteps: 12,
    });
    expect(await settings.get(key)).toEqual({ reasoning_effort: "low", maxSteps: 12 });
  });

  it("keeps each person's latest feedback on a turn, with when they pressed", async () => {
    let now = 1_000;
    const { feedback } = open(() => now);
    expect(await feedback.forTurn("turn-a")).toEqual([]);
    expect(await feedback.record("turn-a", "U1", "positive")).toEqual({
      turnId: "turn-a",
      user: "U1",
      value: "positive",
      at: 1_000,
    });
    now = 2_000;
    await feedback.record("turn-a", "U2", "positive");
    await feedback.record("turn-b", "U1", "negative");
    now = 3_000;
    // U1 changes their mind: one row, the latest press and its time.
    expect(await feedback.record("turn-a", "U1", "negative")).toMatchObject({ at: 3_000 });
    expect(await feedback.forTurn("turn-a")).toEqual([
      { turnId: "turn-a", user: "U2", value: "positive", at: 2_000 },
      { turnId: "turn-a", user: "U1", value: "negative", at: 3_000 },
    ]);
    expect(await feedback.forTurn("turn-b")).toEqual([
      { turnId: "turn-b", user: "U1", value: "negative", at: 2_000 },
    ]);
  });

  it("deletes feedback pressed before a time, the oldest first, at most the number asked for", async () => {
    let now = 1_000;
    const { feedback } = open(() => now);
    for (const user of ["U1", "U2", "U3"]) {
      await feedback.record("turn-a", user, "positive");
      now += 1_000;
    }
    // U1 pressed again since: their press is now the newest.
    await feedback.record("turn-a", "U1", "negative");
    expect(await feedback.purge(4_000, 1)).toBe(1);
    expect((await feedback.forTurn("turn-a")).map((f) => f.user)).toEqual(["U3", "U1"]);
    expect(await feedback.purge(4_000, 10)).toBe(1);
    expect(await feedback.forTurn("turn-a")).toEqual([
      { turnId: "turn-a", user: "U1", value: "negative", at: 4_000 },
    ]);
    expect(await feedback.purge(4_000, 10)).toBe(0);
  });

  it("lists a conversation's unfinished turns in arrival order, also within one millisecond", async () => {
    const stores = open();
    const { turns } = stores;
    // The clock stands still: every turn arrives at 1_000, and order is arrival alone.
    const first = (await newTurn(stores, "1.1"))?.id as string;
    const second = (await newTurn(stores, "1.2"))?.id as string;
    const elsewhere = await stores.conversations.ensure({ ...KEY, threadTs: "2.2" }, "asst");
    (
      await stores.turns.record({
        conversation: elsewhere,
        assistant: elsewhere.assistantId,
        ...KEY,
        messageTs: "2.2",
        user: "U1",
        content: "q",
        notes: [],
      })
    ).turn;
    const third = (await newTurn(stores, "1.3"))?.id as string;
    await turns.finish(first, { outcome: "completed" });
    const conversation = (await stores.conversations.find(KEY))?.id as number;
    expect((await turns.unfinishedIn(conversation)).map((t) => t.id)).toEqual([second, third]);
    expect(await turns.unfinishedIn(elsewhere.id)).toHaveLength(1);
    expect(await turns.unfinishedIn(9_999)).toEqual([]);
    // Several conversations in one read: by conversation, each in arrival order.
    expect(
      (await turns.unfinishedInAny([elsewhere.id, 9_999, conversation])).map((t) => t.id),
    ).toEqual([second, third, (await turns.unfinishedIn(elsewhere.id))[0]?.id]);
    expect((await turns.unfinishedInAny([elsewhere.id])).map((t) => t.conversationId)).toEqual([
      elsewhere.id,
    ]);
    expect(await turns.unfinishedInAny([])).toEqual([]);
  });

  it("leases a conversation to one holder at a time, renewed by its claims, until it expires", async () => {
    let now = 1_000;
    const stores = open(() => now);
    const { leases } = stores;
    const id = (await stores.conversations.ensure(KEY, "asst")).id;
    expect(await leases.claim(id, "r1", 500)).toBe("claimed");
    expect(await leases.claim(id, "r2", 500)).toBe("refused");
    now = 1_400;
    // The holder claiming again renews: live until 1_900 now.
    expect(await leases.claim(id, "r1", 500)).toBe("claimed");
    now = 1_800;
    expect(await leases.claim(id, "r2", 500)).toBe("refused");
    expect(await leases.heldBy("r1")).toBe(1);
    now = 1_900;
    // Expired (its expiry is not after now): another holder takes it over.
    expect(await leases.heldBy("r1")).toBe(0);
    expect(await leases.claim(id, "r2", 500)).toBe("taken_over");
    expect(await leases.heldBy("r2")).toBe(1);
    expect(await leases.claim(id, "r1", 500)).toBe("refused");
    // An expired lease claimed again by its own holder is simply claimed.
    now = 3_000;
    expect(await leases.claim(id, "r2", 500)).toBe("claimed");
  });

  it("claims a conversation and reads it with its unfinished turns, in the order they came", async () => {
    let now = 1_000;
    const stores = open(() => now);
    const { leases, turns } = stores;
    const first = (await newTurn(stores, "1.1"))?.id as string;
    const second = (await newTurn(stores, "1.2"))?.id as string;
    const third = (await newTurn(stores, "1.3"))?.id as string;
    await turns.finish(second, { outcome: "completed" });
    const conversation = (await stores.conversations.find(KEY)) as Conversation;
    const read = await leases.claimReading(conversation.id, "r1", 500);
    expect(read.claim).toBe("claimed");
    expect(read.conversation).toEqual(conversation);
    expect(read.unfinished.map((t) => t.id)).toEqual([first, third]);
    // Read whole, as a turn is read alone.
    expect(read.unfinished[0]).toEqual(await turns.byId(first));
    // Its holder claims again (a renewal) and reads again.
    expect((await leases.claimReading(conversation.id, "r1", 500)).unfinished).toHaveLength(2);
    // Held by another: refused, and nothing read.
    expect(await leases.claimReading(conversation.id, "r2", 500)).toEqual({
      claim: "refused",
      conversation: undefined,
      unfinished: [],
    });
    now = 1_500;
    const taken = await leases.claimReading(conversation.id, "r2", 500);
    expect(taken.claim).toBe("taken_over");
    expect(await leases.heldBy("r2")).toBe(1);
    // A conversation with nothing left to run.
    await turns.finish(first, { outcome: "completed" });
    await turns.finish(third, { outcome: "completed" });
    expect(await leases.claimReading(conversation.id, "r2", 500)).toEqual({
      claim: "claimed",
      conversation,
      unfinished: [],
    });
  });

  it("renews every lease a holder still has, one expired that nobody took included", async () => {
    let now = 1_000;
    const stores = open(() => now);
    const { leases, conversations } = stores;
    const ids: number[] = [];
    for (const threadTs of ["1.1", "2.2", "3.3"]) {
      ids.push((await conversations.ensure({ ...KEY, threadTs }, "asst")).id);
    }
    const [a, b, c] = ids as [number, number, number];
    await leases.claim(a, "r1", 100);
    await leases.claim(b, "r1", 1_000);
    await leases.claim(c, "r2", 1_000);
    now = 1_500;
    expect(await leases.renew("r1", 1_000)).toEqual([a, b]);
    expect(await leases.heldBy("r1")).toBe(2);
    expect(await leases.claim(a, "r2", 100)).toBe("refused");
    now = 2_400;
    expect(await leases.claim(a, "r2", 100)).toBe("refused");
    expect(await leases.renew("r3", 1_000)).toEqual([]);
  });

  it("gives a lease back only from its holder, one at a time or all at once", async () => {
    const stores = open();
    const { leases, conversations } = stores;
    const ids: number[] = [];
    for (const threadTs of ["1.1", "2.2", "3.3"]) {
      ids.push((await conversations.ensure({ ...KEY, threadTs }, "asst")).id);
    }
    const [a, b, c] = ids as [number, number, number];
    await leases.claim(a, "r1", 1_000);
    await leases.claim(b, "r1", 1_000);
    await leases.claim(c, "r2", 1_000);
    expect(await leases.releaseIfDone(a, "r2")).toEqual([]);
    expect(await leases.claim(a, "r2", 1_000)).toBe("refused");
    expect(await leases.releaseIfDone(a, "r1")).toEqual([]);
    // Free again: claimed, not taken over (nobody held it).
    expect(await leases.claim(a, "r2", 1_000)).toBe("claimed");
    expect(await leases.releaseAll("r1")).toBe(1);
    expect(await leases.heldBy("r1")).toBe(0);
    expect(await leases.releaseAll("r1")).toBe(0);
    expect(await leases.heldBy("r2")).toBe(2);
    expect(await leases.claim(b, "r3", 1_000)).toBe("claimed");
  });

  it("gives a lease back only when its conversation has nothing left to run, else reads what is left", async () => {
    const stores = open();
    const { leases, conversations, turns } = stores;
    const conversation = await conversations.ensure(KEY, "asst");
    const ask = async (messageTs: string) =>
      (
        await turns.record({
          conversation,
          assistant: conversation.assistantId,
          ...KEY,
          messageTs,
          user: "U1",
          content: "q",
          notes: [],
        })
      ).turn?.id as string;
    const first = await ask(KEY.threadTs);
    const second = await ask("1.3");
    await leases.claim(conversation.id, "r1", 1_000);
    // Two left, in the order they arrived: the lease is kept.
    const left = await leases.releaseIfDone(conversation.id, "r1");
    expect(left.map((t) => t.id)).toEqual([first, second]);
    expect(await leases.claim(conversation.id, "r2", 1_000)).toBe("refused");
    await turns.finish(first, { outcome: "completed" });
    await turns.finish(second, { outcome: "completed" });
    // Nothing left: given back, and free for anyone.
    expect(await leases.releaseIfDone(conversation.id, "r1")).toEqual([]);
    expect(await leases.heldBy("r1")).toBe(0);
    expect(await leases.claim(conversation.id, "r2", 1_000)).toBe("claimed");
  });

  it("finds the conversations with unfinished turns and no live lease, the longest waiting first", async () => {
    let now = 1_000;
    const stores = open(() => now);
    const { conversations, turns, leases } = stores;
    const ask = async (threadTs: string, messageTs: string) => {
      const c = await conversations.ensure({ ...KEY, threadTs }, "asst");
      const turn = (
        await turns.record({
          conversation: c,
          assistant: c.assistantId,
          ...KEY,
          threadTs,
          messageTs,
          user: "U1",
          content: "q",
          notes: [],
        })
      ).turn;
      return { conversation: c.id, turn: turn?.id as string };
    };
    const a = await ask("1.1", "1.1");
    now = 2_000;
    const b = await ask("2.2", "2.2");
    now = 3_000;
    const c = await ask("3.3", "3.3");
    const done = await ask("4.4", "4.4");
    await turns.finish(done.turn, { outcome: "completed" });
    now = 3_500;
    await ask("1.1", "1.2");
    expect(await leases.unattended(10)).toEqual([a.conversation, b.conversation, c.conversation]);
    // A's oldest unfinished turn is now its second, the newest of all.
    await turns.finish(a.turn, { outcome: "completed" });
    expect(await leases.unattended(10)).toEqual([b.conversation, c.conversation, a.conversation]);
    // A live lease means someone runs it; an expired one does not.
    await leases.claim(b.conversation, "r1", 1_000);
    expect(await leases.unattended(10)).toEqual([c.conversation, a.conversation]);
    expect(await leases.unattended(1)).toEqual([c.conversation]);
    now = 4_500;
    expect(await leases.unattended(10)).toEqual([b.conversation, c.conversation, a.conversation]);
  });
});
