import { describe, expect, it } from "vitest";
import { RunStart } from "../../src/bridge/run-start.js";
import type { Turn } from "../../src/store/turn.js";
import { stepSetup } from "../support/step-setup.js";

function setup() {
  const s = stepSetup();
  const { turns, settings } = s.stores;
  const start = new RunStart({ service: s.service, turns, settings, clock: s.clock });
  /** A turn whose question is posted, as msg-7. */
  const posted = (): Turn => {
    const t = s.composed(s.turn());
    s.stores.turns.recordPostAttempt(t.id);
    return s.stores.turns.recordMessage(t.id, "msg-7");
  };
  return { ...s, start, posted };
}

describe("RunStart", () => {
  it("starts the run with the person's settings and records run, settings and start time", async () => {
    const s = setup();
    s.stores.settings.update({ team: "T1", channel: "C1", user: "U1" }, { modelOverride: "max" });
    const t = s.posted();
    const started = await s.start.step(t, s.context(t));
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

  it("shows the turn queued at the service while its start waits", async () => {
    const s = setup();
    s.service.queuedAhead = 3;
    const t = s.posted();
    await s.start.step(t, s.context(t));
    expect(s.replies.story(t.id)).toEqual(["show:queued(service 3)", "show:working"]);
  });

  it("stopped while the start waits, starts nothing and records nothing", async () => {
    const s = setup();
    const t = s.posted();
    const context = s.context(t);
    context.live.stoppedBy = "U1";
    context.live.waits.abort();
    expect(await s.start.step(t, context)).toBe(t);
    expect(s.service.count("startRun")).toBe(0);
    expect(s.stores.turns.byId(t.id)?.state).toBe("message_posted");
  });

  it("does nothing for a turn that has its run", async () => {
    const s = setup();
    const t = s.posted();
    const running = s.stores.turns.recordRunStart(t.id, {
      runId: "run-0",
      settings: {},
      startedAt: 1,
    });
    expect(await s.start.step(running, s.context(running))).toBe(running);
    expect(s.service.calls).toEqual([]);
  });
});
