import { describe, expect, it, vi } from "vitest";
import { RunStart, RunStartUnknown } from "../../../src/bridge/turn/run-start.js";
import type { TurnLife } from "../../../src/bridge/turn/turn-life.js";
import type { StepContext } from "../../../src/bridge/turn/turn-step.js";
import type { Turn } from "../../../src/store/turn.js";
import { FakeServiceError } from "../../support/fake-service.js";
import { stepSetup } from "../../support/step-setup.js";

/** What a person's stop does to a turn being run whose run is not known (TurnRunner.stop). */
function stopBeforeRun(life: TurnLife): void {
  life.start(null);
  life.stop({ kind: "person", user: "U1" });
  life.stopWithoutRun();
}

async function setup() {
  const s = await stepSetup();
  const { turns, settings } = s.stores;
  const start = new RunStart({ service: s.service, turns, settings, clock: s.clock });
  /** A turn whose question is posted, as msg-7. */
  const posted = async (): Promise<Turn> => {
    const t = await s.composed(await s.turn());
    await s.stores.turns.recordPostAttempt(t.id);
    return await s.stores.turns.recordMessage(t.id, "msg-7");
  };
  /** A context whose outage loop keeps trying for a minute (the default gives up at once). */
  const patient = async (t: Turn): Promise<StepContext> => {
    const context = await s.context(t);
    return { ...context, outage: { ...context.outage, giveUpAfterMs: 60_000 } };
  };
  /** Runs the step to its end, moving the clock a second whenever it waits. */
  const drive = async (work: Promise<Turn>): Promise<Turn> => {
    let settled = false;
    const done = work.finally(() => {
      settled = true;
    });
    done.catch(() => {});
    while (!settled) await s.clock.advance(1_000);
    return done;
  };
  const state = async (t: Turn) => (await s.stores.turns.byId(t.id))?.state;
  return { ...s, start, posted, patient, drive, state };
}

describe("RunStart", () => {
  it("records the question's message the post left unrecorded in the write of its attempt", async () => {
    const s = await setup();
    const t = await s.composed(await s.turn());
    await s.stores.turns.recordPostAttempt(t.id);
    const messages = vi.spyOn(s.stores.turns, "recordMessage");
    const attempts = vi.spyOn(s.stores.turns, "recordRunAttempt");
    const context = { ...(await s.context(t)), unrecordedMessage: "msg-7" };
    const posted = { ...t, state: "message_posted" as const, serviceMessageId: "msg-7" };
    await s.start.step(posted, context);
    expect(messages).not.toHaveBeenCalled();
    expect(attempts).toHaveBeenCalledTimes(1);
    expect(attempts.mock.calls[0]?.[2]).toEqual({ message: "msg-7" });
    expect(context.unrecordedMessage).toBeUndefined();
    expect(await s.stores.turns.byId(t.id)).toMatchObject({
      state: "run_started",
      serviceMessageId: "msg-7",
      runId: "run-1",
    });
  });

  it("sends no start when the write of its attempt and the message fails", async () => {
    const s = await setup();
    const t = await s.composed(await s.turn());
    await s.stores.turns.recordPostAttempt(t.id);
    vi.spyOn(s.stores.turns, "recordRunAttempt").mockRejectedValueOnce(new Error("db gone"));
    const context = { ...(await s.context(t)), unrecordedMessage: "msg-7" };
    const posted = { ...t, state: "message_posted" as const, serviceMessageId: "msg-7" };
    await expect(s.start.step(posted, context)).rejects.toThrow("db gone");
    expect(s.service.count("startRun")).toBe(0);
    // Still to be recorded (by the runner, alone), and the stored turn still looks for it.
    expect(context.unrecordedMessage).toBe("msg-7");
    expect(await s.state(t)).toBe("posting");
  });

  it("starts the run with the person's settings and records run, settings and start time", async () => {
    const s = await setup();
    await s.stores.settings.update(
      { team: "T1", channel: "C1", user: "U1" },
      { modelOverride: "max" },
    );
    const t = await s.posted();
    const started = await s.start.step(t, await s.context(t));
    expect(s.service.calls).toEqual([
      {
        call: "startRun",
        threadId: "thread-9",
        body: { triggerMessageId: "msg-7", modelOverride: "max" },
      },
    ]);
    expect(started).toMatchObject({
      state: "run_started",
      runId: "run-1",
      settings: { modelOverride: "max" },
      runStartedAt: s.clock.now(),
    });
  });

  it("records the attempt, with the settings sent, before the start leaves", async () => {
    const s = await setup();
    const t = await s.posted();
    const held = s.service.hold("startRun");
    const work = s.start.step(t, await s.context(t));
    await held.entered;
    await s.stores.settings.update({ team: "T1", channel: "C1", user: "U1" }, { maxSteps: 9 });
    expect(await s.stores.turns.byId(t.id)).toMatchObject({ state: "run_starting", settings: {} });
    held.release();
    expect(await work).toMatchObject({ state: "run_started", settings: {} });
  });

  it("reads the settings beside the start's wait in the budget, and again after a long wait", async () => {
    const s = await setup();
    /** The body of a start that waited `ms` in the budget, `maxSteps` chosen meanwhile. */
    const sentAfter = async (ms: number, maxSteps: number) => {
      s.service.queuedAhead = 1;
      let turnComes = () => {};
      s.service.queuedUntil = new Promise<void>((resolve) => {
        turnComes = resolve;
      });
      const t = await s.posted();
      const started = s.start.step(t, await s.context(t));
      await s.clock.advance(ms);
      await s.stores.settings.update({ team: "T1", channel: "C1", user: "U1" }, { maxSteps });
      turnComes();
      await started;
      return s.service.calls.filter((c) => c.call === "startRun").at(-1);
    };
    // A short wait: what was read as it began is sent, without a read after it.
    const quick = await sentAfter(999, 9);
    expect(quick).toMatchObject({ body: { triggerMessageId: "msg-7" } });
    expect(quick).not.toMatchObject({ body: { maxSteps: 9 } });
    // A wait of a second or more: read again, so a choice made meanwhile is the one sent.
    expect(await sentAfter(1_000, 12)).toMatchObject({
      body: { triggerMessageId: "msg-7", maxSteps: 12 },
    });
  });

  it("goes by the settings read with the question's record, unless they are a second old", async () => {
    const s = await setup();
    const reads = vi.spyOn(s.stores.settings, "get");
    const read = { settings: { modelOverride: "max" as const }, at: s.clock.now() };
    // Read with the record just before: sent as read, and not read again.
    const t = await s.posted();
    const context = { ...(await s.context(t)), settingsRead: read };
    await s.start.step(t, context);
    expect(reads).not.toHaveBeenCalled();
    expect(context.settingsRead).toBeUndefined();
    expect(s.service.calls.at(-1)).toMatchObject({
      body: { triggerMessageId: "msg-7", modelOverride: "max" },
    });
    // A second old by the time the start goes: read again, so the choice made since is sent.
    await s.stores.settings.update({ team: "T1", channel: "C1", user: "U1" }, { maxSteps: 12 });
    await s.clock.advance(1_000);
    const later = await s.posted();
    await s.start.step(later, { ...(await s.context(later)), settingsRead: read });
    expect(reads).toHaveBeenCalledTimes(1);
    expect(s.service.calls.at(-1)).toMatchObject({
      body: { triggerMessageId: "msg-7", maxSteps: 12 },
    });
  });

  it("shows the turn queued at the service once its start has waited a second", async () => {
    const s = await setup();
    s.service.queuedAhead = 3;
    let turnComes = () => {};
    s.service.queuedUntil = new Promise<void>((resolve) => {
      turnComes = resolve;
    });
    const t = await s.posted();
    const started = s.start.step(t, await s.context(t));
    await s.clock.advance(999);
    expect(s.replies.story(t.id)).toEqual([]);
    await s.clock.advance(1);
    expect(s.replies.story(t.id)).toEqual(["show:queued(service 3)"]);
    turnComes();
    await started;
    expect(s.replies.story(t.id)).toEqual(["show:queued(service 3)", "show:working"]);
  });

  it("shows nothing of a shorter wait, so that the first words may still come first", async () => {
    const s = await setup();
    // A round trip to the budget replicas share, say: told, then its turn at once.
    s.service.queuedAhead = 3;
    const t = await s.posted();
    await s.start.step(t, await s.context(t));
    await s.clock.advance(5_000);
    expect(s.replies.story(t.id)).toEqual(["show:working"]);
  });

  it("stopped while the start waits, starts nothing and records nothing", async () => {
    const s = await setup();
    const t = await s.posted();
    const context = await s.context(t);
    stopBeforeRun(context.life);
    expect(await s.start.step(t, context)).toBe(t);
    expect(s.service.count("startRun")).toBe(0);
    expect(await s.state(t)).toBe("message_posted");
  });

  it("stopped once the start is sent, lets it finish and records the run (it must be stopped)", async () => {
    const s = await setup();
    const t = await s.posted();
    const context = await s.context(t);
    const held = s.service.hold("startRun");
    const work = s.start.step(t, context);
    await held.entered;
    stopBeforeRun(context.life);
    held.release();
    expect(await work).toMatchObject({ state: "run_started", runId: "run-1" });
  });

  for (const error of [
    new FakeServiceError("server"),
    new FakeServiceError("timeout"),
    new FakeServiceError("connection", true),
  ]) {
    it(`never sends a start again that may have started a run (${error.kind}${error.kind === "connection" ? ", sent" : ""})`, async () => {
      const s = await setup();
      s.service.failNext("startRun", error);
      const t = await s.posted();
      const outcome = await s.drive(s.start.step(t, await s.patient(t))).catch((e: unknown) => e);
      expect(outcome).toBeInstanceOf(RunStartUnknown);
      expect((outcome as Error).cause).toBe(error);
      expect(s.service.count("startRun")).toBe(1);
      expect(await s.state(t)).toBe("run_starting");
    });
  }

  it("sends a start again after a 429 or a connection never made, once each", async () => {
    const s = await setup();
    s.service.failNext("startRun", new FakeServiceError("rate_limited"));
    s.service.failNext("startRun", new FakeServiceError("connection", false));
    const t = await s.posted();
    const started = await s.drive(s.start.step(t, await s.patient(t)));
    expect(s.service.count("startRun")).toBe(3);
    expect(started).toMatchObject({ state: "run_started", runId: "run-1" });
  });

  it("a refused start (4xx) ends the step with the refusal, the turn back at message_posted", async () => {
    const s = await setup();
    const refused = new FakeServiceError("bad_request");
    s.service.failNext("startRun", refused);
    const t = await s.posted();
    await expect(s.start.step(t, await s.patient(t))).rejects.toBe(refused);
    expect(await s.state(t)).toBe("message_posted");
  });

  it("a turn found run_starting (sent before a restart) is not started again", async () => {
    const s = await setup();
    const t = await s.stores.turns.recordRunAttempt((await s.posted()).id, {});
    await expect(s.start.step(t, await s.context(t))).rejects.toBeInstanceOf(RunStartUnknown);
    expect(s.service.calls).toEqual([]);
  });

  it("does nothing for a turn that has its run", async () => {
    const s = await setup();
    const t = await s.posted();
    await s.stores.turns.recordRunAttempt(t.id, {});
    const running = await s.stores.turns.recordRunStart(t.id, { runId: "run-0", startedAt: 1 });
    expect(await s.start.step(running, await s.context(running))).toBe(running);
    expect(s.service.calls).toEqual([]);
  });
});
