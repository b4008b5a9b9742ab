import { describe, expect, it } from "vitest";
import type { ReplyTarget, ReplyView } from "../../../src/bridge/ports.js";
import { WithAgentSurface } from "../../../src/slack/agent/agent-surface.js";
import { FakeReplies } from "../../support/fake-replies.js";

/** The decorator over the fake strategy, with recorders for the status line and the session. */
function setup() {
  const events: string[] = [];
  const inner = new FakeReplies();
  const replies = new WithAgentSurface(inner, {
    statusLine: {
      show: (_thread, turnId, view) => events.push(`line ${turnId} ${view.phase.kind}`),
      end: (_thread, turnId) => events.push(`line end ${turnId}`),
      posted: (thread) => events.push(`posted in ${thread.threadTs}`),
    },
    sessions: {
      begin: (_thread, turnId, asked) => events.push(`session ${turnId} by ${asked?.user}`),
      end: (_thread, turnId) => events.push(`session end ${turnId}`),
    },
  });
  const recorded: string[][] = [];
  const target = (parts: string[] = []): ReplyTarget => ({
    turnId: "t1",
    team: "T1",
    channel: "C1",
    threadTs: "1.1",
    parts,
    question: { user: "U1", text: "hi", startsThread: true },
  });
  const recorder = {
    parts: async (p: string[]) => {
      recorded.push(p);
    },
    posting: async () => {},
  };
  return { replies, inner, events, recorded, target, recorder };
}

const view = (phase: ReplyView["phase"], body = ""): ReplyView => ({ body, phase, notes: [] });

describe("a reply strategy with Slack's agent surface", () => {
  it("shows each phase on the status line and holds the session from first view to end", async () => {
    const { replies, inner, events, recorded, target, recorder } = setup();
    const reply = replies.render(target(), recorder);
    await reply.open(view({ kind: "starting" }));
    reply.show(view({ kind: "working" }, "Hel"));
    await reply.finish(view({ kind: "completed" }, "Hello."));
    expect(events).toEqual([
      "session t1 by U1",
      "line t1 starting",
      // The placeholder's post cleared Slack's status line.
      "posted in 1.1",
      "line t1 working",
      "line end t1",
      "session end t1",
    ]);
    // The inner strategy saw every view, and the turn heard of its message.
    expect(inner.story("t1")).toHaveLength(3);
    expect(recorded).toEqual([["reply-t1"]]);
  });

  it("ends the line and the session even when Slack refuses the ending", async () => {
    const { replies, inner, events, target, recorder } = setup();
    inner.failFinish = true;
    const reply = replies.render(target(["9.9"]), recorder);
    await reply.open(view({ kind: "working" }));
    await expect(reply.finish(view({ kind: "failed", error: "x" }))).rejects.toThrow();
    reply.show(view({ kind: "working" }, "late"));
    expect(events).toEqual([
      "session t1 by U1",
      "line t1 working",
      "line end t1",
      "session end t1",
    ]);
  });

  it("holds no session for a reply that only ends (a turn stopped before it began)", async () => {
    const { replies, events, target, recorder } = setup();
    await replies.render(target(), recorder).finish(view({ kind: "stopped", by: "U1" }));
    expect(events).toEqual(["line end t1"]);
  });
});
