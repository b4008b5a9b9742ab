import { describe, expect, it } from "vitest";
import {
  IllegalLifeTransition,
  type StopReason,
  TurnLife,
} from "../../../src/bridge/turn/turn-life.js";
import type { TurnReply } from "../../../src/bridge/turn/turn-reply.js";

const TURN = { id: "t1", conversationId: 1, user: "U1" };
const BY_U1: StopReason = { kind: "person", user: "U1" };
const GONE = new Error("the app was uninstalled");

/** The life only carries its reply for the runner; nothing here shows anything. */
const NO_REPLY = {} as TurnReply;

function life(): TurnLife {
  return new TurnLife(TURN, NO_REPLY);
}

/** A life the runner has taken up. */
function running(runId: string | null = null): TurnLife {
  const l = life();
  l.start(runId);
  return l;
}

/** What a stop leaves to be seen of a turn's life. */
function seen(l: TurnLife) {
  return {
    stage: l.stage,
    stopped: l.stopped,
    left: l.left,
    stoppedBy: l.stoppedBy,
    timedOut: l.timedOut,
    unshown: l.unshown,
    waits: l.waits.aborted,
    leaving: l.leaving.aborted,
  };
}

const calm = {
  stopped: false,
  left: false,
  stoppedBy: undefined,
  timedOut: false,
  unshown: undefined,
  waits: false,
  leaving: false,
};

/** A stop the test answers when it likes, counting how often one was sent. */
function serviceStop() {
  let answer: (taken: boolean) => void = () => {};
  const stop = {
    sent: 0,
    send: () => {
      stop.sent++;
      return new Promise<boolean>((resolve) => {
        answer = resolve;
      });
    },
    answer: (taken: boolean) => answer(taken),
  };
  return stop;
}

describe("a turn's life", () => {
  it("waits, runs and ends, knowing its run once a step records it", () => {
    const l = life();
    expect(seen(l)).toEqual({ stage: "waiting", ...calm });
    expect(l.start(null)).toBe(true);
    expect(l.stage).toBe("running");
    expect(l.runId).toBeUndefined();
    l.ran("run-1");
    l.ran(null);
    expect(l.runId).toBe("run-1");
    l.end();
    expect(seen(l)).toEqual({ stage: "ended", ...calm });
  });

  it("takes a resumed turn's run from its record when it starts", () => {
    expect(running("run-7").runId).toBe("run-7");
  });

  it("throws on a move it does not have: a second start, a second end", () => {
    const l = running();
    expect(() => l.start(null)).toThrow(IllegalLifeTransition);
    l.end();
    expect(() => l.end()).toThrow(/live turn t1 is ended: it cannot become ended/);
  });

  it("is not started once a stop or a leave ended it in its queue", () => {
    const stopped = life();
    stopped.stop(BY_U1);
    stopped.stopWithoutRun();
    const left = life();
    left.stop({ kind: "shutdown" });
    expect(stopped.start(null)).toBe(false);
    expect(left.start(null)).toBe(false);
    expect([stopped.stage, left.stage]).toEqual(["ended", "ended"]);
  });

  describe("stopped while waiting", () => {
    it("only records who asked, and ends at once when the stop finds no run", () => {
      const l = life();
      expect(l.stop(BY_U1)).toBe(true);
      expect(seen(l)).toEqual({ ...calm, stage: "waiting", stopped: true, stoppedBy: "U1" });
      expect(l.stopWithoutRun()).toBe(true);
      expect(l.stage).toBe("ended");
      expect(l.waits.aborted).toBe(false);
    });

    it("is stopping when the runner takes it up before the stop ends it, which then leaves it to the runner", () => {
      const l = life();
      l.stop(BY_U1);
      l.start(null);
      expect(l.stage).toBe("stopping");
      expect(l.stopWithoutRun()).toBe(false);
      expect(l.stage).toBe("stopping");
      expect(l.waits.aborted).toBe(true);
    });
  });

  describe("stopped while running", () => {
    it("is stopping, its waits going on until the stop finds no run", () => {
      const l = running();
      expect(l.stop(BY_U1)).toBe(true);
      expect(seen(l)).toEqual({ ...calm, stage: "stopping", stopped: true, stoppedBy: "U1" });
      l.stopWithoutRun();
      expect(l.waits.aborted).toBe(true);
      expect(l.leaving.aborted).toBe(false);
      l.end();
      expect(l.stage).toBe("ended");
    });

    it("keeps its waits when its run exists: the run is stopped, and followed to its end", () => {
      const l = running("run-1");
      l.stop(BY_U1);
      expect(l.waits.aborted).toBe(false);
    });
  });

  it.each<[string, StopReason, Partial<ReturnType<typeof seen>>]>([
    ["a person", BY_U1, { stage: "stopping", stopped: true, stoppedBy: "U1" }],
    [
      "the time limit",
      { kind: "time_limit" },
      { stage: "stopping", stopped: true, timedOut: true },
    ],
    [
      "a reply Slack will not show",
      { kind: "unshown", error: GONE },
      { stage: "stopping", stopped: true, unshown: GONE, waits: true },
    ],
    [
      "an uninstall",
      { kind: "uninstalled", error: GONE },
      { stage: "stopping", stopped: true, unshown: GONE, waits: true },
    ],
    [
      "a lost lease",
      { kind: "lease_lost" },
      { stage: "leaving", left: true, waits: true, leaving: true },
    ],
    [
      "a shutdown",
      { kind: "shutdown" },
      { stage: "leaving", left: true, waits: true, leaving: true },
    ],
  ])("stopped by %s while running", (_, reason, expected) => {
    const l = running("run-1");
    l.stop(reason);
    expect(seen(l)).toEqual({ ...calm, ...expected });
    expect(l.reason).toEqual(reason);
  });

  it.each<[string, StopReason[], string]>([
    ["a time limit after a person", [BY_U1, { kind: "time_limit" }], "time_limit"],
    ["a person after the time limit", [{ kind: "time_limit" }, BY_U1], "time_limit"],
    [
      "an unshown reply after the time limit",
      [{ kind: "time_limit" }, { kind: "unshown", error: GONE }],
      "unshown",
    ],
    ["a lost lease after a person", [BY_U1, { kind: "lease_lost" }], "lease_lost"],
    ["a person after a shutdown", [{ kind: "shutdown" }, BY_U1], "shutdown"],
    ["a second person", [BY_U1, { kind: "person", user: "U2" }], "person"],
  ])("keeps the weightiest reason: %s", (_, reasons, kept) => {
    const l = running("run-1");
    for (const reason of reasons) l.stop(reason);
    expect(l.reason?.kind).toBe(kept);
    if (kept === "person") expect(l.stoppedBy).toBe("U1");
  });

  describe("left rather than stopped", () => {
    it("while waiting, ends at once and asks nothing more of whoever left it", () => {
      const l = life();
      expect(l.stop({ kind: "lease_lost" })).toBe(false);
      expect(seen(l)).toEqual({ ...calm, stage: "ended", left: true, waits: true, leaving: true });
    });

    it("after a stop, is left: no ending of the stop is written here", () => {
      const l = running();
      l.stop(BY_U1);
      l.stop({ kind: "lease_lost" });
      expect(l.stage).toBe("leaving");
      expect([l.stopped, l.left, l.stoppedBy]).toEqual([false, true, undefined]);
    });

    it("still has its run stopped at the service when a person asks, and stays leaving", () => {
      const l = running("run-1");
      l.stop({ kind: "shutdown" });
      expect(l.stop(BY_U1)).toBe(true);
      expect(l.stage).toBe("leaving");
      expect(l.reason).toEqual({ kind: "shutdown" });
    });
  });

  it("changes nothing for a stop or a leave once ended", () => {
    const l = running();
    l.end();
    expect(l.stop(BY_U1)).toBe(false);
    expect(l.stop({ kind: "lease_lost" })).toBe(false);
    expect(seen(l)).toEqual({ stage: "ended", ...calm });
  });

  describe("the stop sent to the service", () => {
    it("is sent once however often asked, while on its way and once taken", async () => {
      const l = running("run-1");
      const service = serviceStop();
      const first = l.stopRun(service.send);
      const second = l.stopRun(service.send);
      service.answer(true);
      expect(await Promise.all([first, second])).toEqual([true, true]);
      expect(await l.stopRun(service.send)).toBe(true);
      expect(service.sent).toBe(1);
    });

    it("is forgotten when the service did not take it, so a later press sends it again", async () => {
      const l = running("run-1");
      const service = serviceStop();
      const refused = l.stopRun(service.send);
      service.answer(false);
      expect(await refused).toBe(false);
      const again = l.stopRun(service.send);
      service.answer(true);
      expect(await again).toBe(true);
      expect(service.sent).toBe(2);
    });

    it("is forgotten when sending it failed", async () => {
      const l = running("run-1");
      await expect(l.stopRun(() => Promise.reject(new Error("no store")))).rejects.toThrow(
        "no store",
      );
      const service = serviceStop();
      const again = l.stopRun(service.send);
      service.answer(true);
      expect(await again).toBe(true);
      expect(service.sent).toBe(1);
    });
  });
});
