import { describe, expect, it, vi } from "vitest";
import { START_UNCONFIRMED } from "../../../src/bridge/turn/turn-ending.js";
import type { TurnLife } from "../../../src/bridge/turn/turn-life.js";
import { memoryStores } from "../../../src/store/in-memory.js";
import type { Turn } from "../../../src/store/turn.js";
import { fakeCore } from "../../support/fake-core.js";
import { turnLife } from "../../support/fake-replies.js";
import { FakeServiceError, type ServiceCall } from "../../support/fake-service.js";
import { heldCall } from "../../support/held-call.js";
import { ManualClock } from "../../support/manual-clock.js";

const KEY = { team: "T1", channel: "C1", threadTs: "100.000001" };
const BY_U1 = { kind: "person", user: "U1" } as const;

async function setup() {
  const clock = new ManualClock();
  const stores = memoryStores(() => clock.now());
  const { turns, conversations } = stores;
  const { service, replies, runner } = fakeCore(stores, clock, {
    maxMessageChars: 100,
    runTimeoutMs: 60_000,
    serviceOutageMs: 30_000,
  });
  const conversation = await conversations.ensure(KEY, "asst-1");
  const turn = async (text = "What is up?"): Promise<Turn> =>
    (
      await turns.record({
        conversation: conversation,
        assistant: conversation.assistantId,
        ...KEY,
        messageTs: KEY.threadTs,
        user: "U1",
        content: text,
        notes: [],
      })
    ).turn as Turn;
  const live = async (t: Turn): Promise<TurnLife> =>
    turnLife(replies, turns, (await turns.byId(t.id)) as Turn);
  /** Runs the turn to its end, moving the clock along whenever it waits. */
  const finish = async (l: TurnLife) => {
    const done = runner.run(l);
    let ended = false;
    void done.finally(() => {
      ended = true;
    });
    while (!ended) await clock.advance(1_000);
    await done;
    return (await turns.byId(l.id)) as Turn;
  };
  return {
    clock,
    stores,
    turns,
    conversations,
    service,
    replies,
    runner,
    turn,
    live,
    finish,
    conversation,
  };
}

const names = (calls: ServiceCall[]) => calls.map((c) => c.call);
/** The service calls of a turn worked from its start to its end. */
const EVERY_CALL = ["openThread", "postMessage", "startRun", "streamRun", "getRun"];

describe("the turn runner", () => {
  it("composes the question's text and records its post's attempt while the service thread is being opened", async () => {
    const s = await setup();
    const t = await s.turn();
    const opening = s.service.hold("openThread");
    const done = s.finish(await s.live(t));
    await opening.entered;
    // The thread's opening is still held: the question's text and the attempt to post it are
    // recorded all the same.
    await vi.waitFor(async () =>
      expect(await s.turns.byId(t.id)).toMatchObject({
        state: "posting",
        serviceContent: "What is up?",
      }),
    );
    expect((await s.conversations.byId(s.conversation.id))?.serviceThreadId).toBeNull();
    opening.release();
    expect((await done).outcome).toBe("completed");
    // Nothing had been sent: the post went without looking for an earlier one (listMessages).
    expect(names(s.service.calls)).toEqual(EVERY_CALL);
  });

  it("works a turn through every step and ends with the run's own text", async () => {
    const s = await setup();
    const messages = vi.spyOn(s.turns, "recordMessage");
    const t = await s.turn();
    const done = await s.finish(await s.live(t));
    // The question's message went in the write of the run's attempt, not one of its own.
    expect(messages).not.toHaveBeenCalled();
    expect(names(s.service.calls)).toEqual(EVERY_CALL);
    expect(s.service.calls[1]).toEqual({
      call: "postMessage",
      threadId: "thread-1",
      content: "What is up?",
    });
    expect(s.service.calls[2]).toMatchObject({ body: { triggerMessageId: "msg-2" } });
    expect(done).toMatchObject({
      state: "finished",
      outcome: "completed",
      runId: "run-3",
      modelUsed: "model-a",
    });
    expect(s.replies.story(t.id)).toEqual([
      "open:starting",
      "show:working:The an",
      "show:working:The answer.",
      "finish:completed:The answer.",
    ]);
    expect(done.replyParts).toEqual([`reply-${t.id}`]);
  });

  it("follows the run while its start is being recorded, and ends the turn only once it is", async () => {
    const s = await setup();
    const recording = heldCall(s.turns, "recordRunStart");
    const t = await s.turn();
    const done = s.runner.run(await s.live(t));
    await recording.entered;
    // The record of the start is still on its way: the run is followed and its text shown.
    await vi.waitFor(() => expect(s.replies.story(t.id)).toContain("show:working:The answer."));
    expect(await s.turns.byId(t.id)).toMatchObject({ state: "run_starting", runId: null });
    expect(s.replies.story(t.id).some((line) => line.startsWith("finish"))).toBe(false);
    recording.release();
    await done;
    expect(await s.turns.byId(t.id)).toMatchObject({
      state: "finished",
      outcome: "completed",
      runId: "run-3",
    });
    expect(s.replies.story(t.id).at(-1)).toBe("finish:completed:The answer.");
  });

  it("stops following when the run's start cannot be recorded, and ends with an error", async () => {
    const s = await setup();
    s.service.hang = true;
    const recording = heldCall(s.turns, "recordRunStart");
    const t = await s.turn();
    const done = s.runner.run(await s.live(t));
    await recording.entered;
    await vi.waitFor(() => expect(s.replies.story(t.id)).toContain("show:working:The an"));
    recording.fail(new Error("the database went away"));
    await done;
    // Following ended with the record's failure: the hanging run was not waited for.
    expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "error" });
    expect(s.replies.story(t.id).at(-1)).toBe("finish:unreachable:The an");
  });

  it("starts no run on a question whose message could not be recorded", async () => {
    const s = await setup();
    // The message is recorded in the write of the run's attempt.
    const recording = heldCall(s.turns, "recordRunAttempt");
    const t = await s.turn();
    const done = s.finish(await s.live(t));
    await recording.entered;
    recording.fail(new Error("the database went away"));
    expect(await done).toMatchObject({ state: "finished", outcome: "error", runId: null });
    expect(names(s.service.calls)).toEqual(["openThread", "postMessage"]);
    // Recorded alone once the steps failed, so whoever looks at the turn again need not look.
    expect(await s.turns.byId(t.id)).toMatchObject({ serviceMessageId: "msg-2" });
  });

  it("hands the steps the run's stream tells to the turn's reply", async () => {
    const s = await setup();
    const searching = { id: "s1", title: "Searching the docs", status: "in_progress" } as const;
    s.service.steps = [searching, { ...searching, status: "complete" }];
    const t = await s.turn();
    await s.finish(await s.live(t));
    expect(s.replies.story(t.id)).toEqual([
      "open:starting",
      "show:working",
      "show:working",
      "show:working:The an",
      "show:working:The answer.",
      "finish:completed:The answer.",
    ]);
    expect(s.replies.calls.map((c) => c.view.steps?.map((step) => step.status))).toEqual([
      [],
      ["in_progress"],
      ["complete"],
      ["complete"],
      ["complete"],
      ["complete"],
    ]);
  });

  it.each([
    ["openThread", ["openThread"]],
    ["postMessage", ["openThread", "postMessage"]],
  ] as const)("stopped while %s is under way, it takes no further step", async (step, expected) => {
    const s = await setup();
    const t = await s.turn();
    const l = await s.live(t);
    const held = s.service.hold(step);
    const done = s.runner.run(l);
    await held.entered;
    expect(await s.runner.stop(l, BY_U1)).toBe(true);
    held.release();
    await done;
    expect(names(s.service.calls)).toEqual(expected);
    expect(await s.turns.byId(t.id)).toMatchObject({
      state: "finished",
      outcome: "stopped",
      runId: null,
    });
    expect(s.replies.story(t.id).at(-1)).toBe("finish:stopped");
    expect(s.replies.calls.at(-1)?.view.phase).toEqual({ kind: "stopped", by: "U1" });
  });

  it("stopped while the run start is sent, lets it finish and stops the run once, when known", async () => {
    const s = await setup();
    s.service.hang = true;
    const t = await s.turn();
    const l = await s.live(t);
    const held = s.service.hold("startRun");
    const done = s.runner.run(l);
    await held.entered;
    expect(await s.runner.stop(l, BY_U1)).toBe(true);
    expect(s.service.count("stopRun")).toBe(0);
    held.release();
    await done;
    expect(s.service.calls.filter((c) => c.call === "stopRun")).toEqual([
      { call: "stopRun", runId: "run-3" },
    ]);
    expect(await s.turns.byId(t.id)).toMatchObject({
      state: "finished",
      outcome: "stopped",
      runId: "run-3",
    });
    expect(s.replies.calls.at(-1)?.view.phase).toEqual({ kind: "stopped", by: "U1" });
  });

  it("stopped once the run exists, stops the run at the service and keeps what was written", async () => {
    const s = await setup();
    s.service.hang = true;
    const t = await s.turn();
    const l = await s.live(t);
    const done = s.runner.run(l);
    await s.clock.waitForTimers(1); // the run's time limit is armed: the run is being followed
    await s.runner.stop(l, BY_U1);
    await done;
    expect(names(s.service.calls)).toContain("stopRun");
    expect(await s.turns.byId(t.id)).toMatchObject({ outcome: "stopped" });
    expect(s.replies.story(t.id).at(-1)).toBe("finish:stopped:The an");
  });

  it("sends one stop to the service however often the turn is stopped, the time limit too", async () => {
    const s = await setup();
    s.service.hang = true;
    const t = await s.turn();
    const l = await s.live(t);
    const done = s.runner.run(l);
    await s.clock.waitForTimers(1);
    const held = s.service.hold("stopRun");
    const presses = [s.runner.stop(l, BY_U1), s.runner.stop(l, BY_U1)];
    await held.entered;
    await s.clock.advance(60_000);
    held.release();
    expect(await Promise.all(presses)).toEqual([true, true]);
    await done;
    expect(s.service.count("stopRun")).toBe(1);
    expect(s.replies.calls.at(-1)?.view.phase).toEqual({
      kind: "unreachable",
      message: "The assistant did not finish within 1 minute, so the run was stopped.",
    });
  });

  it("heeds a stop asked through another replica before any step", async () => {
    const s = await setup();
    const t = await s.turn();
    await s.turns.requestStop(t.id, "U1");
    const done = await s.finish(await s.live(t));
    expect(s.service.calls).toEqual([]);
    expect(done).toMatchObject({ state: "finished", outcome: "stopped" });
    expect(s.replies.calls.at(-1)?.view.phase).toEqual({ kind: "stopped", by: "U1" });
  });

  describe("an uninstall", () => {
    const gone = { kind: "uninstalled", error: new Error("app_uninstalled") } as const;

    it("stops a followed run at the service and ends the turn in an error", async () => {
      const s = await setup();
      s.service.hang = true;
      const t = await s.turn();
      const l = await s.live(t);
      const done = s.runner.run(l);
      await s.clock.waitForTimers(1);
      expect(await s.runner.stop(l, gone)).toBe(true);
      await done;
      expect(s.service.count("stopRun")).toBe(1);
      expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "error" });
    });

    it("ends a turn still in its queue as stopped, sending nothing", async () => {
      const s = await setup();
      const t = await s.turn();
      const l = await s.live(t);
      await s.runner.stop(l, gone);
      await s.runner.run(l);
      expect(s.service.calls).toEqual([]);
      expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "stopped" });
    });
  });

  describe("left as stored", () => {
    it("takes no further step when its lease is lost, and writes no ending", async () => {
      const s = await setup();
      const t = await s.turn();
      const l = await s.live(t);
      const held = s.service.hold("openThread");
      const done = s.runner.run(l);
      await held.entered;
      expect(await s.runner.stop(l, { kind: "lease_lost" })).toBe(true);
      held.release();
      await done;
      expect(names(s.service.calls)).toEqual(["openThread"]);
      expect(await s.turns.byId(t.id)).toMatchObject({ state: "received", outcome: null });
      expect(s.replies.story(t.id).filter((line) => line.startsWith("finish"))).toEqual([]);
    });

    it("stops following at a shutdown, leaving the run going for the next start", async () => {
      const s = await setup();
      s.service.hang = true;
      const t = await s.turn();
      const l = await s.live(t);
      const done = s.runner.run(l);
      await s.clock.waitForTimers(1);
      await s.runner.stop(l, { kind: "shutdown" });
      await done;
      expect(s.service.count("stopRun")).toBe(0);
      expect(await s.turns.byId(t.id)).toMatchObject({ state: "run_started", outcome: null });
      expect(l.stage).toBe("ended");
    });

    it("is never taken up when left while waiting in its queue", async () => {
      const s = await setup();
      const t = await s.turn();
      const l = await s.live(t);
      await s.runner.stop(l, { kind: "shutdown" });
      await s.runner.run(l);
      expect(s.service.calls).toEqual([]);
      expect(s.replies.story(t.id)).toEqual([]);
      expect((await s.turns.byId(t.id))?.state).toBe("received");
    });
  });

  it("starts the run while the reply's first message waits for Slack", async () => {
    const s = await setup();
    s.replies.holdOpens = true;
    const t = await s.turn();
    const done = s.runner.run(await s.live(t));
    while (s.service.count("getRun") === 0) await s.clock.advance(1_000);
    expect(names(s.service.calls)).toEqual(EVERY_CALL);
    expect(s.replies.story(t.id).at(-1)).not.toMatch(/^finish/);
    s.replies.release();
    await done;
    expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "completed" });
    expect(s.replies.story(t.id).at(-1)).toMatch(/^finish:completed:/);
  });

  it("starts the run only once the reply's first message is near", async () => {
    const s = await setup();
    s.replies.holdRuns = true;
    const t = await s.turn();
    const done = s.runner.run(await s.live(t));
    for (let i = 0; i < 5; i++) await s.clock.advance(1_000);
    expect(names(s.service.calls)).toEqual(["openThread", "postMessage"]);
    s.replies.nearNow();
    while (s.service.count("getRun") === 0) await s.clock.advance(1_000);
    await done;
    expect(names(s.service.calls)).toEqual(EVERY_CALL);
    expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "completed" });
  });

  it("stopped while its run waits for the reply to come near, starts no run and ends stopped", async () => {
    const s = await setup();
    s.replies.holdRuns = true;
    const t = await s.turn();
    const l = await s.live(t);
    const done = s.runner.run(l);
    while (s.service.count("postMessage") === 0) await s.clock.advance(1_000);
    await s.clock.advance(1_000);
    expect(await s.runner.stop(l, BY_U1)).toBe(true);
    await done;
    expect(names(s.service.calls)).toEqual(["openThread", "postMessage"]);
    // No run's attempt recorded the message: it was recorded alone.
    expect(await s.turns.byId(t.id)).toMatchObject({
      state: "finished",
      outcome: "stopped",
      serviceMessageId: "msg-2",
    });
    expect(s.replies.calls.at(-1)?.view.phase).toEqual({ kind: "stopped", by: "U1" });
  });

  it("stops the run it started when Slack will not show the reply, and ends with one sentence", async () => {
    const s = await setup();
    s.service.hang = true;
    s.replies.holdOpens = true;
    s.replies.failOpen = new Error("channel_not_found");
    const t = await s.turn();
    const done = s.runner.run(await s.live(t));
    while (s.service.count("streamRun") === 0) await s.clock.advance(1_000);
    s.replies.release();
    await done;
    expect(s.service.calls.filter((c) => c.call === "stopRun")).toEqual([
      { call: "stopRun", runId: "run-3" },
    ]);
    expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "error" });
    expect(s.replies.calls.at(-1)?.view.phase.kind).toBe("unreachable");
  });

  it("starts nothing at the service when Slack refuses the reply before the run", async () => {
    const s = await setup();
    s.replies.failOpen = new Error("channel_not_found");
    const t = await s.turn();
    await s.finish(await s.live(t));
    expect(names(s.service.calls)).not.toContain("startRun");
    expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "error" });
  });

  it("ends a turn still waiting in its queue at once, without any service call", async () => {
    const s = await setup();
    const t = await s.turn();
    const l = await s.live(t);
    await s.runner.stop(l, BY_U1);
    await s.runner.run(l);
    expect(s.service.calls).toEqual([]);
    expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "stopped" });
    expect(s.replies.story(t.id)).toEqual(["finish:stopped"]);
  });

  it("records the turn finished once when Slack will not show its ending", async () => {
    const s = await setup();
    s.replies.failFinish = true;
    const t = await s.turn();
    const done = await s.finish(await s.live(t));
    expect(done).toMatchObject({ state: "finished", outcome: "completed" });
    expect(s.replies.story(t.id).filter((line) => line.startsWith("finish"))).toHaveLength(1);
  });

  it("refuses a message over the length limit without calling the service", async () => {
    const s = await setup();
    const t = await s.turn("x".repeat(101));
    await s.finish(await s.live(t));
    expect(s.service.calls).toEqual([]);
    expect((await s.turns.byId(t.id))?.outcome).toBe("error");
    const phase = s.replies.calls.at(-1)?.view.phase;
    expect(phase).toMatchObject({
      kind: "unreachable",
      message: expect.stringMatching(/^Your message is 101 characters long; the limit is 100\./),
    });
  });

  describe("resuming from what was recorded", () => {
    const resumed = async (
      prepare: (s: Awaited<ReturnType<typeof setup>>, t: Turn) => Promise<unknown>,
    ) => {
      const s = await setup();
      await s.conversations.setServiceThread(s.conversation.id, "thread-9", "shared");
      const t = await s.turn();
      await prepare(s, t);
      return { s, t };
    };

    it("composed: posts the text fixed before, not a new one", async () => {
      const { s, t } = await resumed(
        async (s, t) =>
          await s.turns.recordContent(t.id, {
            serviceContent: "context\nWhat is up?",
            contextThroughTs: null,
            notes: [],
          }),
      );
      await s.finish(await s.live(t));
      expect(s.service.calls[0]).toEqual({
        call: "postMessage",
        threadId: "thread-9",
        content: "context\nWhat is up?",
      });
    });

    it("posting, the message already at the service: finds it and does not post again", async () => {
      const { s, t } = await resumed(async (s, t) => {
        await s.turns.recordContent(t.id, {
          serviceContent: "What is up?",
          contextThroughTs: null,
          notes: [],
        });
        await s.turns.recordPostAttempt(t.id);
        s.service.messages.push({ id: "msg-earlier", content: "What is up?", role: "user" });
      });
      await s.finish(await s.live(t));
      expect(names(s.service.calls).slice(0, 2)).toEqual(["listMessages", "startRun"]);
      expect(s.service.calls[1]).toMatchObject({ body: { triggerMessageId: "msg-earlier" } });
    });

    it("posting, the message not at the service: looks, then posts it", async () => {
      const { s, t } = await resumed(async (s, t) => {
        await s.turns.recordContent(t.id, {
          serviceContent: "What is up?",
          contextThroughTs: null,
          notes: [],
        });
        await s.turns.recordPostAttempt(t.id);
      });
      await s.finish(await s.live(t));
      expect(names(s.service.calls).slice(0, 3)).toEqual([
        "listMessages",
        "postMessage",
        "startRun",
      ]);
    });

    it("message_posted: starts the run on the recorded message", async () => {
      const { s, t } = await resumed(async (s, t) => {
        await s.turns.recordContent(t.id, {
          serviceContent: "What is up?",
          contextThroughTs: null,
          notes: [],
        });
        await s.turns.recordPostAttempt(t.id);
        await s.turns.recordMessage(t.id, "msg-7");
      });
      await s.finish(await s.live(t));
      expect(s.service.calls[0]).toMatchObject({
        call: "startRun",
        body: { triggerMessageId: "msg-7" },
      });
    });

    it("run_starting: sends nothing and ends saying the answer may not have started", async () => {
      const { s, t } = await resumed(async (s, t) => {
        await s.turns.recordContent(t.id, {
          serviceContent: "What is up?",
          contextThroughTs: null,
          notes: [],
        });
        await s.turns.recordPostAttempt(t.id);
        await s.turns.recordMessage(t.id, "msg-7");
        await s.turns.recordRunAttempt(t.id, {});
      });
      await s.finish(await s.live(t));
      expect(s.service.calls).toEqual([]);
      expect(await s.turns.byId(t.id)).toMatchObject({ state: "finished", outcome: "error" });
      expect(s.replies.calls.at(-1)?.view.phase).toEqual({
        kind: "unreachable",
        message: START_UNCONFIRMED,
      });
    });

    it("run_started: only follows the run, and the reply says it is working", async () => {
      const { s, t } = await resumed(async (s, t) => {
        await s.turns.recordContent(t.id, {
          serviceContent: "What is up?",
          contextThroughTs: null,
          notes: [],
        });
        await s.turns.recordPostAttempt(t.id);
        await s.turns.recordMessage(t.id, "msg-7");
        await s.turns.recordRunAttempt(t.id, {});
        await s.turns.recordRunStart(t.id, { runId: "run-7", startedAt: s.clock.now() });
      });
      await s.finish(await s.live(t));
      expect(names(s.service.calls)).toEqual(["streamRun", "getRun"]);
      expect(s.replies.story(t.id)[0]).toBe("open:working");
    });
  });

  it("rides out an outage: says it keeps trying, looks before posting again, then answers", async () => {
    const s = await setup();
    s.service.failNext("postMessage", new FakeServiceError("server"), 2);
    const t = await s.turn();
    const done = await s.finish(await s.live(t));
    expect(names(s.service.calls).slice(0, 6)).toEqual([
      "openThread",
      "postMessage",
      "listMessages",
      "postMessage",
      "listMessages",
      "postMessage",
    ]);
    expect(s.service.messages).toHaveLength(1);
    expect(s.replies.story(t.id)).toContain("show:retrying");
    expect(done.outcome).toBe("completed");
  });

  it("ends a turn whose run start may have reached the service with one sentence, never a second start", async () => {
    const s = await setup();
    s.service.failNext("startRun", new FakeServiceError("server"));
    const t = await s.turn();
    const done = await s.finish(await s.live(t));
    expect(names(s.service.calls)).toEqual(["openThread", "postMessage", "startRun"]);
    expect(done).toMatchObject({ state: "finished", outcome: "error", runId: null });
    expect(s.replies.calls.at(-1)?.view.phase).toEqual({
      kind: "unreachable",
      message: START_UNCONFIRMED,
    });
  });

  it("ends with one clear sentence when the service stays down past the outage limit", async () => {
    const s = await setup();
    s.service.failNext("openThread", new FakeServiceError("connection"), 1_000);
    const t = await s.turn();
    const start = s.clock.now();
    const done = await s.finish(await s.live(t));
    expect(s.clock.now() - start).toBeGreaterThanOrEqual(30_000);
    expect(done.outcome).toBe("error");
    expect(s.replies.calls.at(-1)?.view.phase).toEqual({
      kind: "unreachable",
      message:
        "The assistant service could not be reached, so this message was not answered. Please try again in a few minutes.",
    });
  });

  it("stops a run past its time limit and says so", async () => {
    const s = await setup();
    s.service.hang = true;
    const t = await s.turn();
    const l = await s.live(t);
    const done = s.runner.run(l);
    await s.clock.waitForTimers(1);
    await s.clock.advance(60_000);
    await done;
    expect(names(s.service.calls)).toContain("stopRun");
    expect((await s.turns.byId(t.id))?.outcome).toBe("error");
    expect(s.replies.calls.at(-1)?.view).toMatchObject({
      body: "The an",
      phase: {
        kind: "unreachable",
        message: "The assistant did not finish within 1 minute, so the run was stopped.",
      },
    });
  });
});
