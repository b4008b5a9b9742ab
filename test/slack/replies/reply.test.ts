import { afterEach, describe, expect, it, vi } from "vitest";
import type { ReplyStep, ReplyTarget, ReplyView } from "../../../src/bridge/ports.js";
import { type EditPayload, Pacer } from "../../../src/slack/calls/pacer.js";
import { PostGate } from "../../../src/slack/calls/post-gate.js";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";
import { splitAnswer } from "../../../src/slack/render/answer-split.js";
import type { ReplyPayload } from "../../../src/slack/render/reply-blocks.js";
import { PacedEdits, type ReplyClient } from "../../../src/slack/replies/reply.js";
import { type MessageMark, replyMark } from "../../../src/slack/web-api/message-mark.js";
import { expectingAllowances } from "../../support/expecting-allowances.js";
import { ManualClock } from "../../support/manual-clock.js";

type Call = { method: "post" | "update" | "delete"; ts: string; text?: string };

/** A 500 from Slack, as the WebClient reports it. */
const serverError = () =>
  Object.assign(new Error("An HTTP protocol error occurred: statusCode = 500"), {
    code: "slack_webapi_http_error",
    statusCode: 500,
  });

/** Slack's answer `ok: false`, as the WebClient reports it. */
const slackError = (error: string) =>
  Object.assign(new Error(`An API error occurred: ${error}`), {
    code: "slack_webapi_platform_error",
    data: { ok: false, error },
  });

const schedulers: CallScheduler[] = [];
afterEach(() => {
  for (const s of schedulers.splice(0)) s.close();
});

/**
 * PacedEdits over the real pacer and post gate, on a manual clock, with a recording client.
 * `thread` holds the marked messages Slack has (the lookup reads it); `landThen500` names
 * the posts (1-based) that Slack takes and then answers with a 500.
 */
function setup(
  options: {
    thread?: { ts: string; mark: MessageMark }[];
    failUpdates?: number;
    landThen500?: number[];
    /** This post (1-based) is taken by Slack, and its answer never comes: a crash. */
    crashAt?: number;
    firstWordsWaitMs?: number;
    /** Where the scheduler's budgets write down each call they are told to expect. */
    expected?: string[];
    /** Slack refuses every message holding a table block with `invalid_blocks`. */
    refuseTables?: boolean;
    holdRunBeyond?: number;
  } = {},
) {
  const clock = new ManualClock();
  const scheduler = new CallScheduler({
    clock,
    random: () => 0.5,
    ...(options.expected && { allowances: expectingAllowances(options.expected) }),
  });
  schedulers.push(scheduler);
  const calls: Call[] = [];
  const errors: string[] = [];
  const thread = [...(options.thread ?? [])];
  /** What happened, in order: records of the turn and calls to Slack. */
  const log: string[] = [];
  let posted = thread.length;
  let updateFailures = options.failUpdates ?? 0;
  /** Each post and update as "method ts block,types", refused ones included. */
  const layouts: string[] = [];
  const refuse = (method: string, ts: string, payload: ReplyPayload) => {
    const types = payload.blocks.map((b) => b.type);
    layouts.push(`${method} ${ts} ${types.join(",")}`);
    if (options.refuseTables && types.includes("table")) throw slackError("invalid_blocks");
  };
  const client: ReplyClient = {
    postMessage: async (args) => {
      refuse("post", `9.${posted + 1}`, args);
      const ts = `9.${++posted}`;
      calls.push({ method: "post", ts, text: args.text });
      thread.push({ ts, mark: args.metadata });
      log.push(`post part ${args.metadata.event_payload.part}`);
      if (options.landThen500?.includes(posted)) throw serverError();
      if (options.crashAt === posted) return new Promise<never>(() => {});
      return { ts };
    },
    deleteMessage: async (args) => {
      calls.push({ method: "delete", ts: args.ts });
    },
  };
  const pacer = new Pacer<ReplyPayload>(
    async (target, payload) => {
      refuse("update", target.ts, payload);
      calls.push({ method: "update", ts: target.ts, text: payload.text });
      if (updateFailures-- > 0)
        throw Object.assign(new Error("boom"), { code: "slack_webapi_request_error" });
    },
    { scheduler, updatesPerMinute: 600, burst: 10 },
  );
  /** Edits given to the pacer, and their payloads made (a maker is called as its edit goes). */
  const edits = { given: 0, made: 0 };
  const strategy = new PacedEdits({
    client: () => client,
    pacer: {
      edit: (target, payload: EditPayload<ReplyPayload>, options) => {
        edits.given++;
        if (typeof payload !== "function") {
          edits.made++;
          return pacer.edit(target, payload, options);
        }
        const counted = () => {
          edits.made++;
          return payload();
        };
        return pacer.edit(target, counted, options);
      },
      owe: (team) => pacer.owe(team),
    },
    postGate: new PostGate({ scheduler, retryDelayMs: 100 }),
    findMessage: async ({ mark }) => {
      log.push(`look for part ${mark.event_payload.part}`);
      return thread.find((m) => JSON.stringify(m.mark) === JSON.stringify(mark))?.ts;
    },
    onError: (_error, what) => errors.push(what),
    ...(options.firstWordsWaitMs === undefined
      ? {}
      : { firstWordsWaitMs: options.firstWordsWaitMs, clock }),
    ...(options.holdRunBeyond !== undefined && { holdRunBeyond: options.holdRunBeyond }),
  });
  const recorded: { parts: string[][]; posting: number } = { parts: [], posting: 0 };
  const render = (target: Partial<ReplyTarget> = {}) =>
    strategy.render(
      { turnId: "turn-1", team: "T1", channel: "C1", threadTs: "1.1", parts: [], ...target },
      {
        parts: async (parts) => {
          recorded.parts.push(parts);
          log.push(`record ${parts.length} parts`);
        },
        posting: async (part) => {
          recorded.posting++;
          log.push(`record posting part ${part}`);
        },
      },
    );
  /** Lets the clock run (post spacing, retry backoff) until `work` settles. */
  const settle = async <T>(work: Promise<T>): Promise<T> => {
    let done = false;
    const watched = work.finally(() => {
      done = true;
    });
    while (!done) await clock.advance(1_000);
    return watched;
  };
  return { clock, calls, errors, recorded, render, log, thread, settle, layouts, edits };
}

/** An answer that takes three messages. */
const LONG = Array.from({ length: 400 }, (_, i) => `line ${i} of a long answer`).join("\n");

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
    await s.clock.advance(0);
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

  it("puts words written while the placeholder waited for its turn on it, posting it once", async () => {
    const s = setup();
    // A channel takes two posts back to back; the third reply's waits a second.
    const replies = [
      s.render({ turnId: "a" }),
      s.render({ turnId: "b" }),
      s.render({ turnId: "c" }),
    ];
    const opened = replies.map((r) => r.open(view("", { kind: "starting" })));
    await s.clock.advance(0);
    replies[2]?.show(view("First words"));
    await s.clock.advance(1_000);
    await Promise.all(opened);
    await s.clock.advance(1_000);
    expect(s.calls).toEqual([
      { method: "post", ts: "9.1", text: "Starting…" },
      { method: "post", ts: "9.2", text: "Starting…" },
      { method: "post", ts: "9.3", text: "First words" },
    ]);
  });

  it("with a wait for the first words, posts the first message when they come, carrying them", async () => {
    const s = setup({ firstWordsWaitMs: 1_500 });
    const reply = s.render();
    const opened = reply.open(view("", { kind: "starting" }));
    reply.show(view("", { kind: "working" }));
    reply.show(view("## "));
    await s.clock.advance(700);
    expect(s.calls).toEqual([]);
    reply.show(view("## First words"));
    await s.clock.advance(0);
    await opened;
    await s.settle(reply.finish(view("## First words.", { kind: "completed", modelUsed: "m" })));
    expect(s.calls).toEqual([
      { method: "post", ts: "9.1", text: "## First words" },
      { method: "update", ts: "9.1", text: "## First words." },
    ]);
  });

  it("with a wait for the first words, has its post's budgets taken ahead while it waits", async () => {
    const told: string[] = [];
    const s = setup({ firstWordsWaitMs: 1_500, expected: told });
    const reply = s.render();
    const opened = reply.open(view("", { kind: "starting" }));
    // Kept in a database, the workspace's budget and the channel's pace take for the post now.
    expect(told).toEqual(["chat.postMessage", "chat.postMessage:C1"]);
    // One opened behind it in the channel waits for the channel's pace: nothing is taken ahead.
    const behind = s.render({ turnId: "behind" });
    const openedBehind = behind.open(view("", { kind: "starting" }));
    expect(told).toHaveLength(2);
    expect(s.calls).toEqual([]);
    reply.show(view("First words"));
    await s.clock.advance(0);
    await opened;
    expect(s.calls).toEqual([{ method: "post", ts: "9.1", text: "First words" }]);
    behind.show(view("More words"));
    await s.clock.advance(1_000);
    await openedBehind;
    expect(s.calls.map((c) => c.text)).toEqual(["First words", "More words"]);
    expect(told).toHaveLength(2);
  });

  it("with a wait for the first words, posts the placeholder when they are late, or a wait to tell", async () => {
    const s = setup({ firstWordsWaitMs: 1_500 });
    const late = s.render({ turnId: "late" });
    const openedLate = late.open(view("", { kind: "starting" }));
    await s.clock.advance(1_499);
    expect(s.calls).toEqual([]);
    await s.clock.advance(1);
    await openedLate;
    const queued = s.render({ turnId: "queued", channel: "C2" });
    await queued.open(view("", { kind: "queued", ahead: 1, where: "thread" }));
    expect(s.calls.map((c) => [c.method, c.text])).toEqual([
      ["post", "Starting…"],
      ["post", "Queued — 1 ahead in this thread"],
    ]);
  });

  it("holds the run of a reply with more first messages ahead of it than it may, until its message is near", async () => {
    const s = setup({ holdRunBeyond: 1 });
    const ids = ["a", "b", "c", "d", "e"];
    const replies = ids.map((turnId) => s.render({ turnId }));
    const near: string[] = [];
    const start = s.clock.now();
    const opened = replies.map((reply, i) => {
      const opening = reply.open(view("", { kind: "starting" }));
      void reply.near?.().then(() => near.push(`${ids[i]} at ${s.clock.now() - start}`));
      return opening;
    });
    await s.clock.advance(0);
    // Two posts go at once (the channel's burst), then one a second: e's has c and d ahead.
    expect(near).toEqual(["a at 0", "b at 0", "c at 0", "d at 0"]);
    await s.clock.advance(1_000);
    expect(near.at(-1)).toBe("e at 1000");
    // Its run writes from then on: its message comes with the words written meanwhile.
    replies[4]?.show(view("Words of e"));
    await s.settle(Promise.all(opened));
    expect(s.calls.map((c) => [c.ts, c.text])).toEqual([
      ["9.1", "Starting…"],
      ["9.2", "Starting…"],
      ["9.3", "Starting…"],
      ["9.4", "Starting…"],
      ["9.5", "Words of e"],
    ]);
  });

  it("queues a held reply's post behind those of replies opened before it that wait for their first words", async () => {
    const s = setup({ holdRunBeyond: 1, firstWordsWaitMs: 1_500 });
    const [a, b, c] = ["a", "b", "c"].map((turnId) => s.render({ turnId }));
    const opened = [a, b, c].map((reply) => reply?.open(view("", { kind: "starting" })));
    let cNear = false;
    void c?.near?.().then(() => {
      cNear = true;
    });
    await s.clock.advance(1_000);
    // c waits neither for words of its own (its run is held) nor ahead of a and b.
    expect(s.calls).toEqual([]);
    expect(cNear).toBe(false);
    a?.show(view("Words of a"));
    b?.show(view("Words of b"));
    await s.settle(Promise.all(opened));
    expect(cNear).toBe(true);
    expect(s.calls.map((call) => call.text)).toEqual(["Words of a", "Words of b", "Starting…"]);
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

  it("records each part before posting it; one Slack took but answered 500 for is found, not posted twice", async () => {
    const s = setup({ landThen500: [1, 2] });
    const reply = s.render();
    await s.settle(reply.open(view("", { kind: "starting" })));
    await s.settle(reply.finish(view(LONG, { kind: "completed" })));
    // Slack has each part once.
    expect(s.thread.map((m) => m.mark.event_payload.part)).toEqual([0, 1, 2]);
    expect(s.recorded.parts.at(-1)).toEqual(["9.1", "9.2", "9.3"]);
    expect(s.log).toEqual([
      "record posting part 0",
      "post part 0",
      "look for part 0",
      "record 1 parts",
      "record posting part 1",
      "post part 1",
      "look for part 1",
      "record 2 parts",
      "record posting part 2",
      "post part 2",
      "record 3 parts",
    ]);
    expect(s.calls.map((c) => c.text).join("\n")).toContain("line 399 of a long answer");
  });

  it("after a crash between posting a continuation and recording it, continues in that part", async () => {
    // The first process: Slack takes part 1, and the process dies before the answer.
    const first = setup({ crashAt: 2 });
    const before = first.render();
    await first.settle(before.open(view("", { kind: "starting" })));
    void before.finish(view(LONG, { kind: "completed" }));
    await vi.waitFor(async () => {
      await first.clock.advance(1_000);
      expect(first.log.at(-1)).toBe("post part 1");
    });
    expect(first.log.slice(-2)).toEqual(["record posting part 1", "post part 1"]);
    expect(first.recorded.parts.at(-1)).toEqual(["9.1"]);

    // The next process, from what was recorded and what Slack has.
    const next = setup({ thread: first.thread });
    const after = next.render({ parts: ["9.1"], postsAttempted: 2 });
    await next.settle(after.finish(view(LONG, { kind: "completed" })));
    expect(next.thread.map((m) => m.mark.event_payload.part)).toEqual([0, 1, 2]);
    expect(next.recorded.parts.at(-1)).toEqual(["9.1", "9.2", "9.3"]);
    expect(next.log).toEqual([
      "look for part 1",
      "record 2 parts",
      "record posting part 2",
      "post part 2",
      "record 3 parts",
    ]);
    // The part found is edited to what it must show.
    expect(next.calls.filter((c) => c.method === "update").map((c) => c.ts)).toContain("9.2");
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
    const s = setup({ thread: [{ ts: "9.5", mark: replyMark("turn-1", 0) }] });
    const reply = s.render({ postsAttempted: 1 });
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

  it("makes one payload for each edit that goes, from the newest of the views given meanwhile", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    reply.show(view("Hel"));
    await s.clock.advance(0);
    const before = { ...s.edits };
    // A hundred views within the message's second: one edit waits, made as it goes.
    let body = "Hel";
    for (let i = 0; i < 100; i++) {
      body += ` w${i}`;
      reply.show(view(body));
      await s.clock.advance(5);
    }
    expect(s.edits).toEqual({ given: before.given + 1, made: before.made });
    await s.clock.advance(1_000);
    expect(s.edits).toEqual({ given: before.given + 1, made: before.made + 1 });
    expect(s.calls.filter((c) => c.method === "update").map((c) => c.text)).toEqual(["Hel", body]);
  });

  it("rolls a long answer over to its next message as it is written, before the size cap", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    // Four characters at a time, fifty times a second.
    for (let at = 4; at < LONG.length; at += 4) {
      reply.show(view(LONG.slice(0, at)));
      await s.clock.advance(20);
    }
    const written = splitAnswer(LONG);
    expect(written).toHaveLength(3);
    const posts = s.calls.filter((c) => c.method === "post");
    expect(posts.map((c) => c.ts)).toEqual(["9.1", "9.2", "9.3"]);
    expect(s.recorded.parts.at(-1)).toEqual(["9.1", "9.2", "9.3"]);
    // Each continuation was posted with the first line after its cut, and its part before
    // it ended as the final answer's, never showing more than a part holds.
    for (const c of posts.slice(1)) expect(c.text?.length).toBeLessThan(30);
    const lastOf = (ts: string) => s.calls.filter((c) => c.ts === ts).at(-1)?.text;
    expect([lastOf("9.1"), lastOf("9.2")]).toEqual(written.slice(0, 2));
    for (const c of s.calls) expect(c.text?.length).toBeLessThanOrEqual(3_800);
    // Layout went with what was sent: a payload made for each edit and post, not each view.
    expect(s.edits.made).toBeLessThan(s.calls.length + 3);
    await s.settle(reply.finish(view(LONG, { kind: "completed" })));
    expect(lastOf("9.3")).toBe(written[2]);
  });

  it("follows an answer written anew in every message it shows, not only the last", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    const first = LONG.slice(0, 5_000);
    reply.show(view(first));
    await s.clock.advance(2_000);
    // As long, so that it fits the room of the layout before: the last part's edit finds it.
    const anew = first.replaceAll("line", "LINE");
    reply.show(view(anew));
    await s.clock.advance(2_000);
    const lastOf = (ts: string) => s.calls.filter((c) => c.ts === ts).at(-1)?.text;
    const parts = splitAnswer(anew);
    expect(parts).toHaveLength(2);
    expect([lastOf("9.1"), lastOf("9.2")]).toEqual(parts);
  });

  it("shows the step in progress in the paced edits, spending no edit on a step it does not show", async () => {
    const s = setup();
    const reply = s.render();
    const searching = { id: "s1", title: "Searching the docs", status: "in_progress" } as const;
    const withSteps = (body: string, steps: ReplyStep[]): ReplyView => ({
      ...view(body),
      steps,
    });
    await reply.open(view("", { kind: "starting" }));
    reply.show(withSteps("", [searching]));
    await s.clock.advance(1_000);
    // A step that changes nothing shown (pending, or more details) is no edit.
    reply.show(withSteps("", [searching, { id: "s2", title: "Reading", status: "pending" }]));
    reply.show(withSteps("", [{ ...searching, details: "2 pages" }]));
    await s.clock.advance(1_000);
    // Text is paced as ever: at once, then the latest view after the message's second.
    reply.show(withSteps("Hel", [searching]));
    await s.clock.advance(0);
    reply.show(
      withSteps("Hell", [searching, { id: "s3", title: "Citing", status: "in_progress" }]),
    );
    reply.show(withSteps("Hello", [{ ...searching, status: "complete" }]));
    await s.clock.advance(1_000);
    await reply.finish({
      ...withSteps("Hello there.", [{ ...searching, status: "complete" }]),
      phase: { kind: "completed" },
    });
    expect(s.calls).toEqual([
      { method: "post", ts: "9.1", text: "Starting…" },
      { method: "update", ts: "9.1", text: "Searching the docs…" },
      { method: "update", ts: "9.1", text: "Hel" },
      { method: "update", ts: "9.1", text: "Hello" },
      { method: "update", ts: "9.1", text: "Hello there." },
    ]);
  });

  describe("tables", () => {
    const TABLE = "| a | b |\n|---|--:|\n| 1 | 2 |";

    it("shows a table as a table block in the final edit only, ending its message", async () => {
      const s = setup();
      const reply = s.render();
      await reply.open(view("", { kind: "starting" }));
      reply.show(view(`Prices:\n\n${TABLE}`));
      await s.clock.advance(1_000);
      await s.settle(
        reply.finish(view(`Prices:\n\n${TABLE}\n\nThat is all.`, { kind: "completed" })),
      );
      expect(s.layouts).toEqual([
        "post 9.1 context,actions",
        "update 9.1 markdown,context,actions",
        "update 9.1 markdown,table",
        "post 9.2 markdown,context_actions",
      ]);
      expect(s.errors).toEqual([]);
    });

    it("sends a final edit Slack refuses for its table again with the table as text", async () => {
      const s = setup({ refuseTables: true });
      const reply = s.render();
      await reply.open(view("", { kind: "starting" }));
      await s.settle(reply.finish(view(`Prices:\n\n${TABLE}`, { kind: "completed" })));
      expect(s.layouts).toEqual([
        "post 9.1 context,actions",
        "update 9.1 markdown,table,context_actions",
        "update 9.1 markdown,context_actions",
      ]);
      expect(s.errors).toEqual(["a table block Slack refused, shown as text"]);
    });

    it("posts a part Slack refuses for its table again with the table as text", async () => {
      const s = setup({ refuseTables: true });
      const reply = s.render();
      await reply.open(view("", { kind: "starting" }));
      await s.settle(
        reply.finish(view(`Intro\n\n${TABLE}\n\nNext\n\n${TABLE}`, { kind: "completed" })),
      );
      // The edit of the first message and the post of the second go side by side.
      const of = (ts: string) => s.layouts.filter((line) => line.includes(` ${ts} `));
      expect(of("9.1")).toEqual([
        "post 9.1 context,actions",
        "update 9.1 markdown,table",
        "update 9.1 markdown",
      ]);
      expect(of("9.2")).toEqual([
        "post 9.2 markdown,table,context_actions",
        "post 9.2 markdown,context_actions",
      ]);
      expect(s.recorded.parts.at(-1)).toEqual(["9.1", "9.2"]);
    });
  });
});
