import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Bridge } from "../../src/bridge/bridge.js";
import type { Inbound } from "../../src/bridge/inbound.js";
import { memoryStores } from "../../src/store/in-memory.js";
import { openSqliteStores } from "../../src/store/sqlite/open.js";
import type { Stores } from "../../src/store/stores.js";
import { fakeCore, quiet } from "../support/fake-core.js";
import { ManualClock } from "../support/manual-clock.js";
import { postgresStores } from "../support/postgres.js";
import { tempFolder } from "../support/temp-folder.js";
import { distinctiveText, sqliteFilesHolding } from "../support/text-on-disk.js";

function setup(stores: Stores = memoryStores(), maxQueuedPerPerson = 5) {
  const clock = new ManualClock();
  const { turns, conversations } = stores;
  const { service, replies, runner } = fakeCore(stores, clock, {
    maxMessageChars: 1_000,
    runTimeoutMs: 60_000,
    serviceOutageMs: 60_000,
  });
  const bridge = new Bridge({
    conversations,
    turns,
    leases: stores.leases,
    replica: { holder: "replica-1", leaseTtlMs: 15_000, sweepMs: 2_000 },
    clock,
    runner,
    replies,
    logger: quiet,
    assistantFor: () => "asst-1",
    maxQueuedPerPerson,
  });
  return { stores, service, replies, bridge };
}

let ts = 100;
function inbound(fields: Partial<Inbound> = {}): Inbound {
  const own = `${ts++}.000100`;
  return {
    team: "T1",
    channel: "C1",
    isDirect: false,
    threadTs: fields.threadTs ?? own,
    ts: own,
    user: "U1",
    text: "a question",
    files: [],
    mentioned: true,
    ...fields,
  };
}

describe("Bridge.accept", () => {
  it("answers a mention, a reply in its thread, and every DM; ignores other channel messages", async () => {
    const s = setup();
    const first = inbound();
    expect(await s.bridge.accept(first)).toBe("accepted");
    expect(await s.bridge.accept(inbound({ threadTs: first.threadTs, mentioned: false }))).toBe(
      "accepted",
    );
    expect(await s.bridge.accept(inbound({ mentioned: false }))).toBe("ignored");
    expect(
      await s.bridge.accept(inbound({ channel: "D1", isDirect: true, mentioned: false })),
    ).toBe("accepted");
    await s.bridge.idle();
    expect(s.service.count("openThread")).toBe(2);
    expect(s.service.count("startRun")).toBe(3);
  });

  it("runs a turn first in its conversation on the record just read, and reads again one that waited", async () => {
    const s = setup();
    const reads = vi.spyOn(s.stores.turns, "byId");
    const first = inbound();
    expect(await s.bridge.accept(first)).toBe("accepted");
    await s.bridge.idle();
    expect(reads).not.toHaveBeenCalled();
    // Two in one thread at once: the second waits behind the first, and is read when its turn
    // comes (the first's run is still starting when the second is taken on).
    const held = s.service.hold("startRun");
    const second = inbound({ threadTs: first.threadTs });
    const third = inbound({ threadTs: first.threadTs });
    expect(await s.bridge.accept(second)).toBe("accepted");
    expect(await s.bridge.accept(third)).toBe("accepted");
    await held.entered;
    // The third is taken on once Slack has been answered for it.
    await new Promise(setImmediate);
    held.release();
    await s.bridge.idle();
    expect(reads).toHaveBeenCalledTimes(1);
    expect(s.service.count("startRun")).toBe(3);
  });

  it("takes a new thread's lease in the question's record, and runs its turn on the records just written", async () => {
    const s = setup();
    const { turns, conversations, leases } = s.stores;
    const claims = vi.spyOn(leases, "claimReading");
    const reads = vi.spyOn(conversations, "byId");
    const turnReads = vi.spyOn(turns, "byId");
    const unfinishedReads = vi.spyOn(turns, "unfinishedIn");
    const releases = vi.spyOn(leases, "releaseIfDone");
    await s.stores.settings.update({ team: "T1", channel: "C1", user: "U1" }, { maxSteps: 3 });
    const settingsReads = vi.spyOn(s.stores.settings, "get");
    expect(await s.bridge.accept(inbound())).toBe("accepted");
    // Held from the record on, before Slack is answered.
    expect(await leases.heldBy("replica-1")).toBe(1);
    await s.bridge.idle();
    // No claim, and nothing read again: the turn ran on what the record wrote.
    expect(claims).not.toHaveBeenCalled();
    expect(reads).not.toHaveBeenCalled();
    expect(turnReads).not.toHaveBeenCalled();
    // Started with the asker's settings as the record read them.
    expect(settingsReads).not.toHaveBeenCalled();
    expect(s.service.calls.filter((c) => c.call === "startRun")).toMatchObject([
      { body: { maxSteps: 3 } },
    ]);
    // Once its queue is empty (drained) the lease goes back in the same statement as the
    // look for turns left, and with none left nothing else is read.
    expect(releases).toHaveBeenCalledTimes(1);
    expect(unfinishedReads).not.toHaveBeenCalled();
    expect(await leases.heldBy("replica-1")).toBe(0);
  });

  it("claims a conversation whose lease a replica left behind, reading its unfinished turns in the claim", async () => {
    let now = 1_000;
    const s = setup(memoryStores(() => now));
    const { turns, conversations, leases } = s.stores;
    const first = inbound();
    // Another replica held the thread and died: its lease row is there, expired.
    const { id } = await conversations.ensure(
      { team: first.team, channel: first.channel, threadTs: first.threadTs },
      "asst-1",
    );
    expect(await leases.claim(id, "replica-2", 500)).toBe("claimed");
    now = 2_000;
    const claims = vi.spyOn(leases, "claimReading");
    const reads = vi.spyOn(conversations, "byId");
    const turnReads = vi.spyOn(turns, "byId");
    expect(await s.bridge.accept(first)).toBe("accepted");
    // The record leaves the row to a claim.
    expect(await leases.heldBy("replica-1")).toBe(0);
    await s.bridge.idle();
    expect(claims).toHaveBeenCalledTimes(1);
    // Read again by nobody: the runner runs the turn on the conversation read with the claim.
    expect(reads).not.toHaveBeenCalled();
    expect(turnReads).not.toHaveBeenCalled();
    expect(s.service.count("startRun")).toBe(1);
    expect(await leases.heldBy("replica-1")).toBe(0);
  });

  it("tells the service the calls an accepted turn will make, once Slack has been answered", async () => {
    const s = setup();
    const first = inbound();
    expect(await s.bridge.accept(first)).toBe("accepted");
    // Told after the acknowledgement: nothing yet.
    expect(s.service.expected).toEqual([]);
    await s.bridge.idle();
    // A new thread: the thread, the question and the run's stream; the run's start.
    expect(s.service.expected).toEqual([
      { calls: { request: 3, run_start: 1 }, caller: { party: first.user, workspace: "T1" } },
    ]);
    // A follow-up in a thread that has its service thread needs none opened.
    expect(await s.bridge.accept(inbound({ threadTs: first.threadTs }))).toBe("accepted");
    await s.bridge.idle();
    expect(s.service.expected[1]?.calls).toEqual({ request: 2, run_start: 1 });
  });

  it("records a message once, however often it is delivered", async () => {
    const s = setup();
    const message = inbound();
    expect(await s.bridge.accept(message)).toBe("accepted");
    expect(await s.bridge.accept({ ...message })).toBe("duplicate");
    await s.bridge.idle();
    expect(s.service.count("postMessage")).toBe(1);
  });

  it("shows a turn behind an earlier one of its thread as queued at once", async () => {
    const s = setup();
    // The first answer is still starting when the second is taken on.
    const held = s.service.hold("startRun");
    const first = inbound();
    await s.bridge.accept(first);
    await s.bridge.accept(inbound({ threadTs: first.threadTs }));
    const second = (await s.stores.turns.unfinished())[1]?.id ?? "";
    // Recorded before Slack is answered; taken on just after.
    expect([s.replies.story(second), s.service.calls]).toEqual([[], []]);
    await new Promise(setImmediate);
    expect(s.replies.story(second)[0]).toBe("open:queued(thread 1)");
    held.release();
    await s.bridge.idle();
    expect(s.replies.story(second).at(-1)).toBe("finish:completed:The answer.");
  });

  it("refuses past the per-person limit and keeps the refused turn finished", async () => {
    const s = setup(memoryStores(), 1);
    expect(await s.bridge.accept(inbound())).toBe("accepted");
    const over = inbound();
    expect(await s.bridge.accept(over)).toBe("over_limit");
    expect(await s.stores.turns.byMessage("T1", "C1", over.ts)).toMatchObject({
      state: "finished",
      outcome: "error",
    });
    await s.bridge.idle();
    expect(s.service.count("startRun")).toBe(1);
  });

  it.each([
    ["memory", () => ({ stores: memoryStores(), path: undefined })],
    [
      "sqlite",
      () => {
        const path = join(tempFolder("over-limit-"), "bridge.db");
        return { stores: openSqliteStores(path), path };
      },
    ],
    ["postgres", () => ({ stores: postgresStores(), path: undefined })],
  ])("keeps nothing of a question refused past the limit (%s)", async (_name, open) => {
    const { stores, path } = open();
    const s = setup(stores, 1);
    expect(await s.bridge.accept(inbound())).toBe("accepted");
    const question = distinctiveText("REFUSED", 9_000);
    const over = inbound({
      text: question,
      files: [
        {
          id: "F1",
          name: `${question.slice(0, 40)}.txt`,
          url_private: "https://files.slack.com/x",
        },
      ],
    });
    expect(await s.bridge.accept(over)).toBe("over_limit");
    await s.bridge.idle();
    // The row stays (a Slack retry of the message is a duplicate), and holds no text of it.
    expect(await s.stores.turns.byMessage("T1", "C1", over.ts)).toMatchObject({
      state: "finished",
      content: "",
      files: [],
      serviceContent: null,
      notes: [],
      error: null,
    });
    expect(await s.bridge.accept({ ...over })).toBe("duplicate");
    if (path) {
      expect(sqliteFilesHolding(path, [question])).toEqual([]);
      await stores.close();
      expect(sqliteFilesHolding(path, [question])).toEqual([]);
    }
  });

  it("only records while closing, and answers what it recorded at the next start", async () => {
    const stores = memoryStores();
    const before = setup(stores);
    await before.bridge.close();
    expect(await before.bridge.accept(inbound())).toBe("deferred");
    await before.bridge.idle();
    expect(before.service.calls).toEqual([]);
    const after = setup(stores);
    expect(await after.bridge.resume()).toBe(1);
    await after.bridge.idle();
    expect(after.service.count("startRun")).toBe(1);
    expect(await stores.turns.unfinished()).toEqual([]);
  });
});

describe("Bridge.stop", () => {
  it("lets only the asker stop, only from the turn's channel", async () => {
    const s = setup();
    s.service.hang = true;
    await s.bridge.accept(inbound());
    const id = (await s.stores.turns.unfinished())[0]?.id ?? "";
    expect(await s.bridge.stop(id, "U2", { team: "T1", channel: "C1" })).toBe("not_owner");
    expect(await s.bridge.stop(id, "U1", { team: "T1", channel: "C2" })).toBe("not_running");
    expect(await s.bridge.stop(id, "U1", { team: "T1", channel: "C1" })).toBe("stopped");
    await s.bridge.idle();
    expect((await s.stores.turns.byId(id))?.outcome).toBe("stopped");
    expect(await s.bridge.stop(id, "U1", { team: "T1", channel: "C1" })).toBe("not_running");
  });

  it("stops every turn of the person in the channel, running and queued", async () => {
    const s = setup();
    s.service.hang = true;
    const first = inbound();
    await s.bridge.accept(first);
    await s.bridge.accept(inbound({ threadTs: first.threadTs }));
    expect((await s.bridge.activeFor("T1", "C1", "U1")).map((a) => a.running)).toEqual([
      false,
      false,
    ]);
    const { stopped, failed } = await s.bridge.stopAllFor("T1", "C1", "U1");
    expect([stopped.length, failed.length]).toEqual([2, 0]);
    await s.bridge.idle();
    expect(await s.stores.turns.unfinished()).toEqual([]);
    expect(s.service.count("startRun")).toBe(0);
  });
});

describe("Bridge.stopTurnOf", () => {
  it("stops the asker's turns of one thread, once however often; others change nothing", async () => {
    const s = setup();
    s.service.hang = true;
    const asked = inbound();
    await s.bridge.accept(asked);
    await vi.waitFor(() => expect(s.service.count("streamRun")).toBe(1));
    const thread = asked.threadTs;
    expect(await s.bridge.stopTurnOf("T1", "C1", thread, "U2")).toEqual({
      result: "not_owner",
      asker: "U1",
    });
    expect(await s.bridge.stopTurnOf("T1", "C1", "999.000100", "U1")).toEqual({
      result: "not_running",
    });
    expect(await s.bridge.stopTurnOf("T1", "C2", thread, "U1")).toEqual({
      result: "not_running",
    });
    expect(s.service.count("stopRun")).toBe(0);
    const pressed = await Promise.all([
      s.bridge.stopTurnOf("T1", "C1", thread, "U1"),
      s.bridge.stopTurnOf("T1", "C1", thread, "U1"),
    ]);
    expect(pressed).toEqual([{ result: "stopped" }, { result: "stopped" }]);
    await s.bridge.idle();
    expect(s.service.count("stopRun")).toBe(1);
    const [turn] = await s.stores.turns.activeFor("T1", "C1", "U1");
    expect(turn).toBeUndefined();
    expect(s.replies.story(s.replies.calls[0]?.turnId ?? "").at(-1)).toMatch(/^finish:stopped/);
    expect(await s.bridge.stopTurnOf("T1", "C1", thread, "U1")).toEqual({
      result: "not_running",
    });
  });
});
