import { WebAPIPlatformError, WebAPIRateLimitedError } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import { type Note, NoteGate, type NoteGateOptions } from "../../../src/slack/calls/note-gate.js";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";
import { ManualClock } from "../../support/manual-clock.js";

const gates: NoteGate[] = [];
afterEach(() => {
  for (const gate of gates.splice(0)) gate.close();
});

/** A gate over a fake chat.postEphemeral on a manual clock; `fail` may make a call throw. */
function setup(options: Partial<NoteGateOptions> = {}, fail?: (note: Note, i: number) => unknown) {
  const clock = new ManualClock(0);
  const sent: { at: number; channel: string; user: string; text: string }[] = [];
  const failed: Note[] = [];
  let calls = 0;
  const gate = new NoteGate({
    scheduler: new CallScheduler({ clock, random: () => 0.5 }),
    send: async (note) => {
      const error = fail?.(note, calls++);
      if (error !== undefined) throw error;
      sent.push({ at: clock.now(), channel: note.channel, user: note.user, text: note.text });
    },
    onFailed: (note) => failed.push(note),
    ...options,
  });
  gates.push(gate);
  const note = (user: string, channel = "C1", text = "refused"): Note => ({
    team: "T1",
    channel,
    user,
    text,
  });
  return { gate, clock, sent, failed, note };
}

describe("the note gate", () => {
  it("paces one channel's notes: a burst of 3, then 10 a minute, oldest first", async () => {
    const { gate, clock, sent, note } = setup();
    const users = ["U1", "U2", "U3", "U4", "U5"];
    expect(users.map((u) => gate.tell(note(u)))).toEqual(Array(5).fill("queued"));
    await clock.advance(0);
    expect(sent.map((s) => s.user)).toEqual(["U1", "U2", "U3"]);
    await clock.advance(20_000);
    expect(sent.map((s) => [s.user, s.at])).toEqual([
      ["U1", 0],
      ["U2", 0],
      ["U3", 0],
      ["U4", 6_000],
      ["U5", 12_000],
    ]);
  });

  it("keeps the workspace under its own budget, whatever the channels", async () => {
    const { gate, clock, sent, note } = setup({ perMinute: 6, burst: 2 });
    for (const channel of ["C1", "C2", "C3", "C4"]) gate.tell(note("U1", channel));
    await clock.advance(0);
    expect(sent).toHaveLength(2);
    await clock.advance(30_000);
    expect(sent.map((s) => [s.channel, s.at])).toEqual([
      ["C1", 0],
      ["C2", 0],
      ["C3", 10_000],
      ["C4", 20_000],
    ]);
  });

  it("tells a person the same thing in a channel once in repeatAfterMs", async () => {
    const { gate, clock, sent, note } = setup({ repeatAfterMs: 60_000 });
    expect(gate.tell(note("U1"))).toBe("queued");
    expect(gate.tell(note("U1"))).toBe("repeated");
    expect(gate.tell(note("U1", "C1", "another note"))).toBe("queued");
    expect(gate.tell(note("U1", "C2"))).toBe("queued");
    await clock.advance(59_999);
    expect(gate.tell(note("U1"))).toBe("repeated");
    await clock.advance(1);
    expect(gate.tell(note("U1"))).toBe("queued");
    await clock.advance(10_000);
    expect(sent.map((s) => [s.channel, s.text, s.at])).toEqual([
      ["C1", "refused", 0],
      ["C2", "refused", 0],
      // One call in flight per channel: the second note of C1 follows its first.
      ["C1", "another note", 0],
      ["C1", "refused", 60_000],
    ]);
  });

  it("drops what does not fit in a channel's queue", async () => {
    const { gate, clock, sent, note } = setup({ maxWaiting: 2, channelBurst: 1 });
    const results = ["U1", "U2", "U3", "U4"].map((u) => gate.tell(note(u)));
    expect(results).toEqual(["queued", "queued", "dropped", "dropped"]);
    await clock.advance(60_000);
    expect(sent.map((s) => s.user)).toEqual(["U1", "U2"]);
    expect(gate.stats()).toEqual({ waiting: 0, sent: 2 });
  });

  it("waits out a 429 and lets go of a note Slack refuses", async () => {
    const { gate, clock, sent, failed, note } = setup({}, (n, i) => {
      if (i === 0) return new WebAPIRateLimitedError(5);
      if (n.user === "UGONE")
        return new WebAPIPlatformError({ ok: false, error: "user_not_in_channel" });
      return undefined;
    });
    gate.tell(note("U1"));
    gate.tell(note("UGONE", "C2"));
    await clock.advance(0);
    expect(sent).toEqual([]);
    await clock.advance(5_000);
    expect(sent.map((s) => [s.user, s.at])).toEqual([["U1", 5_000]]);
    expect(failed.map((n) => n.user)).toEqual(["UGONE"]);
  });
});
