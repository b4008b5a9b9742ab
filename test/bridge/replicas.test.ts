import { describe, expect, it } from "vitest";
import { Bridge } from "../../src/bridge/bridge.js";
import type { Inbound } from "../../src/bridge/inbound.js";
import { memoryStores } from "../../src/store/in-memory.js";
import type { Stores } from "../../src/store/stores.js";
import { fakeCore, quiet } from "../support/fake-core.js";
import { FakeService } from "../support/fake-service.js";
import { ManualClock } from "../support/manual-clock.js";

const TTL_MS = 15_000;
const SWEEP_MS = 2_000;
const LIMITS = { maxMessageChars: 1_000, runTimeoutMs: 600_000, serviceOutageMs: 60_000 };

/**
 * Replicas in one process: each its own bridge, runner, replies and clock (for its timers:
 * renewals and sweeps fire only when the test moves it), over one set of stores and one
 * service, as replicas share one database and one assistant service.
 */
function cluster() {
  let now = Date.UTC(2026, 0, 1);
  const stores = memoryStores(() => now);
  const service = new FakeService();
  const takeovers: string[] = [];
  const replica = async (holder: string) => {
    const clock = new ManualClock(now);
    const { replies, runner } = fakeCore(stores, clock, LIMITS, service);
    const bridge = new Bridge({
      conversations: stores.conversations,
      turns: stores.turns,
      leases: stores.leases,
      replica: { holder, leaseTtlMs: TTL_MS, sweepMs: SWEEP_MS },
      clock,
      runner,
      replies,
      logger: quiet,
      assistantFor: () => "asst-1",
      onTakeover: () => takeovers.push(holder),
    });
    await bridge.resume();
    return { holder, clock, replies, bridge };
  };
  /** Moves the database's time (lease expiry) and a replica's timers together. */
  const pass = async (ms: number, ...replicas: { clock: ManualClock }[]) => {
    now += ms;
    for (const r of replicas) await r.clock.advance(ms);
  };
  return { stores, service, takeovers, replica, pass };
}

let ts = 100;
function question(fields: Partial<Inbound> = {}): Inbound {
  const own = `${ts++}.000100`;
  return {
    team: "T1",
    channel: "C1",
    isDirect: false,
    threadTs: fields.threadTs ?? own,
    ts: own,
    user: "U1",
    text: `question ${own}`,
    files: [],
    mentioned: true,
    ...fields,
  };
}

/** A's answer to a new question whose run start is held (the test releases it). */
async function startHeld(
  c: ReturnType<typeof cluster>,
  a: { bridge: Bridge },
): Promise<{ first: Inbound; held: { release: () => void } }> {
  const held = c.service.hold("startRun");
  const first = question();
  expect(await a.bridge.accept(first)).toBe("accepted");
  await held.entered;
  return { first, held };
}

/** The next message of `first`'s thread, without a mention. */
const followUp = (first: Inbound) => question({ threadTs: first.threadTs, mentioned: false });

/** A's answer to a new question is being written, its run going on until it is stopped. */
async function streamingIn(c: ReturnType<typeof cluster>, a: { bridge: Bridge }): Promise<Inbound> {
  c.service.hang = true;
  const streaming = c.service.hold("streamRun");
  const asked = question();
  await a.bridge.accept(asked);
  await streaming.entered;
  streaming.release();
  return asked;
}

const unfinished = async (stores: Stores) => await stores.turns.unfinished();
/** The id of the turn recorded for a question. */
const turnOf = async (stores: Stores, q: Inbound) =>
  (await stores.turns.byMessage(q.team, q.channel, q.ts))?.id ?? "";

describe("replicas sharing one database", () => {
  it("runs a conversation's turns in the replica holding it, in order, whichever replica heard them", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    const { first, held } = await startHeld(c, a);
    // B records the thread's next message, but A holds the conversation: B runs nothing.
    const second = followUp(first);
    expect(await b.bridge.accept(second)).toBe("accepted");
    expect(b.bridge.leasesHeld).toBe(0);
    held.release();
    await a.bridge.idle();
    await b.bridge.idle();
    expect(await unfinished(c.stores)).toEqual([]);
    for (const q of [first, second]) {
      expect(a.replies.story(await turnOf(c.stores, q)).at(-1)).toBe(
        "finish:completed:The answer.",
      );
      expect(b.replies.story(await turnOf(c.stores, q))).toEqual([]);
    }
    const posted = c.service.calls.filter((call) => call.call === "postMessage");
    expect(posted.map((call) => call.content)).toEqual([first.text, second.text]);
    expect(c.service.count("startRun")).toBe(2);
    expect(await c.stores.leases.heldBy("A")).toBe(0);
  });

  it("opens the replies of turns recorded elsewhere in their order, the first one at once", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    const { first, held } = await startHeld(c, a);
    const later = [2, 3].map(() => followUp(first));
    for (const q of later) await b.bridge.accept(q);
    held.release();
    await a.bridge.idle();
    const [second, third] = await Promise.all(later.map((q) => turnOf(c.stores, q)));
    const opens = a.replies.calls.filter((call) => call.call === "open").map((call) => call.turnId);
    expect(opens).toEqual([await turnOf(c.stores, first), second, third]);
    expect(a.replies.story(third ?? "")[0]).toBe("open:queued(thread 1)");
  });

  it("shows a turn recorded elsewhere as queued at its holder's next sweep, while the one before runs", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    const { first, held } = await startHeld(c, a);
    const second = followUp(first);
    await b.bridge.accept(second);
    expect(a.replies.story(await turnOf(c.stores, second))).toEqual([]);
    await c.pass(SWEEP_MS, a);
    expect(a.replies.story(await turnOf(c.stores, second))).toEqual(["open:queued(thread 1)"]);
    held.release();
    await a.bridge.idle();
    expect(a.replies.story(await turnOf(c.stores, second)).at(-1)).toBe(
      "finish:completed:The answer.",
    );
  });

  it("looks at every conversation it holds with one read per sweep, however many", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    const started = [];
    for (let i = 0; i < 3; i++) started.push(await startHeld(c, a));
    const later = started.map(({ first }) => followUp(first));
    for (const q of later) await b.bridge.accept(q);
    const reads = countReads(c.stores);
    await c.pass(SWEEP_MS, a);
    for (const q of later) {
      expect(a.replies.story(await turnOf(c.stores, q))).toEqual(["open:queued(thread 1)"]);
    }
    expect(reads).toEqual({ unfinishedIn: 0, unfinishedInAny: 1 });
    for (const { held } of started) held.release();
    await a.bridge.idle();
    expect(await unfinished(c.stores)).toEqual([]);
  });

  it("takes over a dead replica's answer once its lease expires, without a second run", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    const asked = await streamingIn(c, a);
    // A dies: its work stops where it is and nothing is handed back.
    a.bridge.shutdown();
    await a.bridge.idle();
    await c.pass(TTL_MS - SWEEP_MS, b);
    expect(b.bridge.leasesHeld).toBe(0);
    c.service.hang = false;
    await c.pass(SWEEP_MS, b);
    await b.bridge.idle();
    expect(c.takeovers).toEqual(["B"]);
    const turn = await turnOf(c.stores, asked);
    expect(await c.stores.turns.byId(turn)).toMatchObject({
      state: "finished",
      outcome: "completed",
    });
    expect(b.replies.story(turn).at(-1)).toBe("finish:completed:The answer.");
    expect(c.service.count("startRun")).toBe(1);
  });

  it("posts a dead replica's reply before the follow-ups' placeholders when it died posting it", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    // A sends its reply's first message and stalls before Slack answers: the attempt is
    // recorded, the message may not exist.
    a.replies.holdOpens = true;
    const first = question();
    await a.bridge.accept(first);
    const firstTurn = await turnOf(c.stores, first);
    await until(async () => (await c.stores.turns.byId(firstTurn))?.replyPostsAttempted === 1);
    const second = followUp(first);
    await b.bridge.accept(second);
    b.replies.holdOpens = true;
    await c.pass(TTL_MS + SWEEP_MS, b);
    expect(c.takeovers).toEqual(["B"]);
    // B looks for (or posts) the first reply's message; the second waits until it stands.
    const opens = () => b.replies.calls.filter((x) => x.call === "open").map((x) => x.turnId);
    expect(opens()).toEqual([firstTurn]);
    b.replies.release();
    await until(async () => opens().length === 2);
    expect(opens()).toEqual([firstTurn, await turnOf(c.stores, second)]);
    b.replies.holdOpens = false;
    b.replies.release();
    await b.bridge.idle();
    expect(await unfinished(c.stores)).toEqual([]);
    // A wakes: its lease is gone, so it leaves the turn and writes nothing more.
    await a.clock.advance(TTL_MS / 3);
    a.replies.release();
    await a.bridge.idle();
    expect(a.replies.story(firstTurn).some((s) => s.startsWith("finish"))).toBe(false);
  });

  it("hands its conversations back when it stops, so another replica goes on at once", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    await streamingIn(c, a);
    a.bridge.shutdown();
    await a.bridge.idle();
    expect(await a.bridge.handBack()).toBe(1);
    c.service.hang = false;
    await c.pass(SWEEP_MS, b);
    await b.bridge.idle();
    expect(c.takeovers).toEqual([]);
    expect(await unfinished(c.stores)).toEqual([]);
    expect(c.service.count("startRun")).toBe(1);
  });

  it("leaves a turn as stored when its lease went to another replica, and writes no ending", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    const asked = await streamingIn(c, a);
    // A stalls past its lease (its renewals do not run); B takes the conversation over.
    await c.pass(TTL_MS + SWEEP_MS, b);
    expect(c.takeovers).toEqual(["B"]);
    // A's next renewal finds the lease gone: it stops following and ends nothing.
    await a.clock.advance(TTL_MS / 3);
    await a.bridge.idle();
    const turn = await turnOf(c.stores, asked);
    expect(a.replies.story(turn).some((s) => s.startsWith("finish"))).toBe(false);
    expect(a.bridge.leasesHeld).toBe(0);
    c.service.hang = false;
    await c.service.stopRun((await c.stores.turns.byId(turn))?.runId ?? "");
    await b.bridge.idle();
    expect((await c.stores.turns.byId(turn))?.state).toBe("finished");
    expect(b.replies.story(turn).at(-1)).toMatch(/^finish:/);
  });
});

describe("a stop pressed in another replica", () => {
  it("stops a queued turn there through the database, and nothing is sent for it", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    const { first, held } = await startHeld(c, a);
    const second = followUp(first);
    await b.bridge.accept(second);
    // The person presses Stop on the second answer; the press reaches B, which does not run it.
    expect(
      await b.bridge.stop(await turnOf(c.stores, second), "U1", { team: "T1", channel: "C1" }),
    ).toBe("stopped");
    held.release();
    await a.bridge.idle();
    expect(await c.stores.turns.byId(await turnOf(c.stores, second))).toMatchObject({
      state: "finished",
      outcome: "stopped",
    });
    expect(a.replies.story(await turnOf(c.stores, second)).at(-1)).toMatch(/^finish:stopped/);
    expect(c.service.count("postMessage")).toBe(1);
    expect(c.service.count("startRun")).toBe(1);
  });

  it("stops a run there at the service, and its holder shows it stopped", async () => {
    const c = cluster();
    const [a, b] = [await c.replica("A"), await c.replica("B")];
    const asked = await streamingIn(c, a);
    const turn = await turnOf(c.stores, asked);
    expect(await b.bridge.stop(turn, "U1", { team: "T1", channel: "C1" })).toBe("stopped");
    await a.bridge.idle();
    expect(c.service.count("stopRun")).toBe(1);
    expect((await c.stores.turns.byId(turn))?.outcome).toBe("stopped");
    expect(b.replies.story(turn)).toEqual([]);
  });
});

/** Lets the event loop turn until `done` holds (work after an acknowledgement, store writes). */
async function until(done: () => Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 1_000; turn++) {
    if (await done()) return;
    await new Promise(setImmediate);
  }
  throw new Error("it never happened");
}

/** Counts the reads of conversations' unfinished turns made from now on. */
function countReads(stores: Stores): { unfinishedIn: number; unfinishedInAny: number } {
  const counts = { unfinishedIn: 0, unfinishedInAny: 0 };
  const { turns } = stores;
  const one = turns.unfinishedIn.bind(turns);
  const many = turns.unfinishedInAny.bind(turns);
  turns.unfinishedIn = (id) => {
    counts.unfinishedIn++;
    return one(id);
  };
  turns.unfinishedInAny = (ids) => {
    counts.unfinishedInAny++;
    return many(ids);
  };
  return counts;
}
