import { describe, expect, it, vi } from "vitest";
import type { ReplyRecorder, ReplyStrategy } from "../../../src/bridge/ports.js";
import { TurnReply } from "../../../src/bridge/turn/turn-reply.js";
import { memoryStores } from "../../../src/store/in-memory.js";
import type { Turn } from "../../../src/store/turn.js";
import { FakeReplies } from "../../support/fake-replies.js";

async function setup(
  prepare?: (turns: ReturnType<typeof memoryStores>["turns"], id: string) => Promise<unknown>,
) {
  const { turns } = memoryStores();
  const created = (
    await turns.record({
      assistant: "a",
      team: "T",
      channel: "C",
      threadTs: "1.1",
      messageTs: "1.1",
      user: "U1",
      content: "q",
      notes: ["a note"],
    })
  ).turn as Turn;
  await prepare?.(turns, created.id);
  const replies = new FakeReplies();
  let firstText = 0;
  const reply = new TurnReply(
    replies,
    turns,
    (await turns.byId(created.id)) as Turn,
    () => firstText++,
  );
  return { turns, replies, reply, id: created.id, firstTexts: () => firstText };
}

describe("TurnReply", () => {
  it("opens once, whoever asks first, and records the placeholder on the turn", async () => {
    const s = await setup();
    await Promise.all([
      s.reply.open({ kind: "queued", ahead: 1, where: "thread" }),
      s.reply.open({ kind: "starting" }),
    ]);
    expect(s.replies.story(s.id)).toEqual(["open:queued(thread 1)"]);
    expect(await s.turns.byId(s.id)).toMatchObject({
      replyPostsAttempted: 1,
      replyParts: [`reply-${s.id}`],
    });
  });

  it("owns the text so far: statuses keep it, the first text is told once", async () => {
    const s = await setup();
    await s.reply.open({ kind: "starting" });
    s.reply.status({ kind: "working" }); // says nothing new over "Starting…": not sent
    s.reply.write("Hel");
    s.reply.write("Hello");
    s.reply.status({ kind: "retrying", note: "still trying" });
    await s.reply.finish({ kind: "completed" }, "Hello there.");
    expect(s.replies.story(s.id)).toEqual([
      "open:starting",
      "show:working:Hel",
      "show:working:Hello",
      "show:retrying:Hello",
      "finish:completed:Hello there.",
    ]);
    expect(s.firstTexts()).toBe(1);
    expect(s.reply.text).toBe("Hello there.");
    expect(s.replies.calls.every((c) => c.view.notes[0] === "a note")).toBe(true);
  });

  it("shows working after a queued status, and after a restart, where the screen may say anything", async () => {
    const queued = await setup();
    await queued.reply.open({ kind: "queued", ahead: 2, where: "thread" });
    queued.reply.status({ kind: "working" });
    expect(queued.replies.story(queued.id)).toEqual(["open:queued(thread 2)", "show:working"]);

    const resumed = await setup(async (turns, id) => await turns.recordReply(id, ["9.9"]));
    await resumed.reply.open({ kind: "starting" });
    resumed.reply.status({ kind: "working" });
    expect(resumed.replies.story(resumed.id)).toEqual(["open:starting", "show:working"]);
  });

  it("ends in the placeholder being posted, not in a second message", async () => {
    const s = await setup();
    s.replies.holdOpens = true;
    const opening = s.reply.open({ kind: "queued", ahead: 1, where: "thread" });
    const finishing = s.reply.finish({ kind: "stopped", by: "U1" }, "");
    await new Promise((resolve) => setImmediate(resolve));
    expect(s.replies.story(s.id)).toEqual(["open:queued(thread 1)"]);
    s.replies.release();
    await Promise.all([opening, finishing]);
    expect(s.replies.story(s.id)).toEqual(["open:queued(thread 1)", "finish:stopped"]);
  });

  it("keeps the run's steps in the order they began, an update replacing its step in place", async () => {
    const s = await setup();
    await s.reply.open({ kind: "starting" });
    const searching = { id: "s1", title: "Searching the docs", status: "in_progress" } as const;
    s.reply.step(searching);
    s.reply.write("Hel");
    s.reply.step({ id: "s2", title: "Reading a page", status: "in_progress" });
    s.reply.step({ ...searching, status: "complete", details: "2 pages" });
    s.reply.step({ ...searching, status: "complete", details: "2 pages" }); // told again: not sent
    await s.reply.finish({ kind: "completed" }, "Hello.");
    const steps = s.replies.calls.map((c) =>
      (c.view.steps ?? []).map((step) => `${step.id}:${step.status}`).join(" "),
    );
    expect(s.replies.story(s.id)).toEqual([
      "open:starting",
      "show:working",
      "show:working:Hel",
      "show:working:Hel",
      "show:working:Hel",
      "finish:completed:Hello.",
    ]);
    expect(steps).toEqual([
      "",
      "s1:in_progress",
      "s1:in_progress",
      "s1:in_progress s2:in_progress",
      "s1:complete s2:in_progress",
      "s1:complete s2:in_progress",
    ]);
    expect(s.replies.calls.at(-1)?.view.steps?.[0]).toEqual({
      id: "s1",
      title: "Searching the docs",
      status: "complete",
      details: "2 pages",
    });
    // Views already handed out keep what they showed.
    expect(s.replies.calls[1]?.view.steps).toEqual([searching]);
  });

  it("keeps at most 100 steps, still updating the known ones", async () => {
    const s = await setup();
    await s.reply.open({ kind: "starting" });
    for (let i = 0; i < 120; i++)
      s.reply.step({ id: `s${i}`, title: `step ${i}`, status: "pending" });
    s.reply.step({ id: "s0", title: "step 0", status: "complete" });
    const last = s.replies.calls.at(-1)?.view.steps ?? [];
    expect(last).toHaveLength(100);
    expect(last[0]?.status).toBe("complete");
    expect(last.at(-1)?.id).toBe("s99");
    expect(s.replies.calls).toHaveLength(1 + 100 + 1);
  });

  it("records the first message's attempt as it opens, once, while the renderer waits for its first words", async () => {
    const s = await setup();
    const { turns, id } = s;
    const recorded = vi.spyOn(turns, "recordReplyAttempt");
    const { reply, firstWords, posted } = await waitingReply(turns, id);
    const opened = reply.open({ kind: "starting" });
    await vi.waitFor(async () => expect((await turns.byId(id))?.replyPostsAttempted).toBe(1));
    expect(posted).toEqual([]);
    firstWords.resolve();
    await opened;
    expect(posted).toEqual(["posted 0"]);
    expect(recorded.mock.calls).toEqual([[id, 0]]);
  });

  it("records the attempt again when the post goes, if the record made as it opened failed", async () => {
    const s = await setup();
    const { turns, id } = s;
    const real = turns.recordReplyAttempt.bind(turns);
    let stalled = true;
    vi.spyOn(turns, "recordReplyAttempt").mockImplementation((turnId, part) =>
      stalled ? Promise.reject(new Error("the database stalled")) : real(turnId, part),
    );
    const { reply, firstWords, posted } = await waitingReply(turns, id);
    const opened = reply.open({ kind: "starting" });
    await new Promise((resolve) => setImmediate(resolve));
    stalled = false;
    firstWords.resolve();
    await opened;
    expect(posted).toEqual(["posted 0"]);
    expect((await turns.byId(id))?.replyPostsAttempted).toBe(1);
  });
});

/**
 * The turn's reply on a renderer that posts its first message once the test resolves
 * `firstWords`, after its record; `posted` says when it went.
 */
async function waitingReply(turns: ReturnType<typeof memoryStores>["turns"], id: string) {
  const firstWords = deferred();
  const posted: string[] = [];
  const turn = (await turns.byId(id)) as Turn;
  const reply = new TurnReply(waitingRenderer(firstWords.promise, posted), turns, turn);
  return { reply, firstWords, posted };
}

function waitingRenderer(firstWords: Promise<void>, posted: string[]): ReplyStrategy {
  return {
    render: (_target, recorder: ReplyRecorder) => ({
      open: async () => {
        await firstWords;
        await recorder.posting(0);
        posted.push("posted 0");
      },
      show: () => undefined,
      finish: async () => undefined,
    }),
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
