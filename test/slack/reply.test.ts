import { afterEach, describe, expect, it } from "vitest";
import type { ReplyTarget, ReplyView } from "../../src/bridge/ports.js";
import { Pacer } from "../../src/slack/pacer.js";
import { PostGate } from "../../src/slack/post-gate.js";
import { PacedEdits, type ReplyClient } from "../../src/slack/reply.js";
import type { ReplyPayload } from "../../src/slack/reply-blocks.js";
import { CallScheduler } from "../../src/slack/scheduler.js";
import { ManualClock } from "../support/manual-clock.js";

type Call = { method: "post" | "update" | "delete"; ts: string; text?: string };

const schedulers: CallScheduler[] = [];
afterEach(() => {
  for (const s of schedulers.splice(0)) s.close();
});

/** PacedEdits over the real pacer and post gate, on a manual clock, with a recording client. */
function setup(options: { found?: string; failUpdates?: number } = {}) {
  const clock = new ManualClock();
  const scheduler = new CallScheduler({ clock, random: () => 0.5 });
  schedulers.push(scheduler);
  const calls: Call[] = [];
  const errors: string[] = [];
  let posted = 0;
  let updateFailures = options.failUpdates ?? 0;
  const client: ReplyClient = {
    postMessage: async (args) => {
      const ts = `9.${++posted}`;
      calls.push({ method: "post", ts, text: args.text });
      return { ts };
    },
    deleteMessage: async (args) => {
      calls.push({ method: "delete", ts: args.ts });
    },
  };
  const pacer = new Pacer<ReplyPayload>(
    async (target, payload) => {
      calls.push({ method: "update", ts: target.ts, text: payload.text });
      if (updateFailures-- > 0)
        throw Object.assign(new Error("boom"), { code: "slack_webapi_request_error" });
    },
    { scheduler, updatesPerMinute: 600, burst: 10 },
  );
  const strategy = new PacedEdits({
    client,
    pacer,
    postGate: new PostGate({ scheduler }),
    findReply: async () => options.found,
    onError: (_error, what) => errors.push(what),
  });
  const recorded: { parts: string[][]; posting: number } = { parts: [], posting: 0 };
  const render = (target: Partial<ReplyTarget> = {}) =>
    strategy.render(
      { turnId: "turn-1", team: "T1", channel: "C1", threadTs: "1.1", parts: [], ...target },
      {
        parts: (parts) => recorded.parts.push(parts),
        posting: () => recorded.posting++,
      },
    );
  return { clock, calls, errors, recorded, render };
}

const view = (body: string, phase: ReplyView["phase"] = { kind: "working" }): ReplyView => ({
  body,
  phase,
  notes: [],
});

describe("PacedEdits", () => {
  it("posts one placeholder, edits it with the latest text, and ends in it", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    reply.show(view("Hel"));
    reply.show(view("Hello"));
    await s.clock.advance(1_000);
    await reply.finish(view("Hello there.", { kind: "completed", modelUsed: "m-1" }));
    // The first text goes at once; the next waits out the message's one-second spacing.
    expect(s.calls).toEqual([
      { method: "post", ts: "9.1", text: "Starting…" },
      { method: "update", ts: "9.1", text: "Hel" },
      { method: "update", ts: "9.1", text: "Hello" },
      { method: "update", ts: "9.1", text: "Hello there." },
    ]);
    expect(s.recorded).toEqual({ posting: 1, parts: [["9.1"]] });
  });

  it("continues a long answer in further messages, recording each", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    const long = Array.from({ length: 400 }, (_, i) => `line ${i} of a long answer`).join("\n");
    let done = false;
    const finishing = reply.finish(view(long, { kind: "completed" })).finally(() => {
      done = true;
    });
    // Posts in a channel are spaced a second apart: let that time pass.
    while (!done) await s.clock.advance(1_000);
    await finishing;
    const posts = s.calls.filter((c) => c.method === "post").map((c) => c.ts);
    expect(posts.length).toBeGreaterThan(2);
    expect(s.recorded.parts.at(-1)).toEqual(posts);
    const shown = s.calls.filter((c) => c.method === "update" || c.ts !== "9.1");
    expect(shown.map((c) => c.text).join("\n")).toContain("line 399 of a long answer");
  });

  it("removes messages the stream showed when the final answer is shorter", async () => {
    const s = setup();
    const reply = s.render({ parts: ["9.7", "9.8"] });
    await reply.finish(view("Short.", { kind: "completed" }));
    expect(s.calls).toHaveLength(2);
    expect(s.calls).toEqual(
      expect.arrayContaining([
        { method: "update", ts: "9.7", text: "Short." },
        { method: "delete", ts: "9.8" },
      ]),
    );
    expect(s.recorded.parts).toEqual([["9.7"]]);
  });

  it("continues in the placeholder found in the thread after a crash, posting none", async () => {
    const s = setup({ found: "9.5" });
    const reply = s.render({ postAttempted: true });
    await reply.open(view("", { kind: "starting" }));
    await reply.finish(view("Done.", { kind: "completed" }));
    expect(s.calls).toEqual([{ method: "update", ts: "9.5", text: "Done." }]);
    expect(s.recorded).toEqual({ posting: 0, parts: [["9.5"]] });
  });

  it("lets a failed interim edit go, and the final still lands", async () => {
    const s = setup({ failUpdates: 1 });
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    reply.show(view("partial"));
    await s.clock.advance(1_000);
    await reply.finish(view("All of it.", { kind: "completed" }));
    expect(s.calls.filter((c) => c.method === "update").map((c) => c.text)).toEqual([
      "partial",
      "All of it.",
    ]);
  });
});
