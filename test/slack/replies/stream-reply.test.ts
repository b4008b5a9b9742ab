import { afterEach, describe, expect, it } from "vitest";
import type { ReplyRenderer, ReplyTarget, ReplyView } from "../../../src/bridge/ports.js";
import { Pacer } from "../../../src/slack/calls/pacer.js";
import { PostGate } from "../../../src/slack/calls/post-gate.js";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";
import { StreamGate } from "../../../src/slack/calls/stream-gate.js";
import type { ReplyPayload } from "../../../src/slack/render/reply-blocks.js";
import { NativeStream } from "../../../src/slack/replies/native-stream.js";
import { PacedEdits } from "../../../src/slack/replies/reply.js";
import type { StopStreamArgs, StreamChunk } from "../../../src/slack/web-api/web-api.js";
import { expectingAllowances } from "../../support/expecting-allowances.js";
import { ManualClock } from "../../support/manual-clock.js";

/** A refusal from Slack (HTTP 200, `ok: false`), as the WebClient reports it. */
const slackError = (error: string) =>
  Object.assign(new Error(`An API error occurred: ${error}`), {
    code: "slack_webapi_platform_error",
    data: { ok: false, error },
  });
const serverError = () =>
  Object.assign(new Error("An HTTP protocol error occurred: statusCode = 500"), {
    code: "slack_webapi_http_error",
    statusCode: 500,
  });

/** A chunk as a short line: `text:…`, `task:id=status:title`, `stop-button`. */
function describeChunk(chunk: StreamChunk): string {
  if (chunk.type === "markdown_text") return `text:${chunk.text}`;
  if (chunk.type === "task_update") {
    return `task:${chunk.id}=${chunk.status}:${chunk.title}${chunk.details ? `:${chunk.details}` : ""}`;
  }
  if (chunk.type === "blocks")
    return JSON.stringify(chunk.blocks).includes("stop_run") ? "stop-button" : "blocks";
  return chunk.type;
}

const schedulers: CallScheduler[] = [];
afterEach(() => {
  for (const s of schedulers.splice(0)) s.close();
});

interface Options {
  /** The nth call of a method (1-based) fails with this error. */
  fail?: Record<string, Record<number, () => Error>>;
  /** What the thread lookup finds. */
  unmarked?: string;
  limits?: { softLimit: number; hardLimit: number };
  firstWordsWaitMs?: number;
  /** Where the scheduler's budgets write down each call they are told to expect. */
  expected?: string[];
  startsPerMinute?: number;
  /** The workspace's appends in any minute, instead of the default 95. */
  appendsPerMinute?: number;
  /** The pacer's budget, instead of 600 edits a minute with a burst of 10. */
  pacer?: { updatesPerMinute: number; burst: number };
  /** Slack's answer to the nth call of a method (1-based) waits until `release(method)`. */
  hold?: Record<string, number>;
}

/**
 * NativeStream over the real scheduler, stream gate, pacer and post gate, on a manual clock,
 * with a client that records every call as a line and the time it went: `start 9.1 for U1
 * [chunks]`, `append 9.1 [chunks]`, `stop 9.1 part 0` (a quiet stop) or `stop 9.1 part 0
 * [chunks] +blocks(context,…)` (a stop carrying text and the blocks under the answer, by
 * type), `update 9.1 text`, `post 9.2 text`, `delete 9.2`.
 */
function setup(options: Options = {}) {
  const clock = new ManualClock();
  const scheduler = new CallScheduler({
    clock,
    random: () => 0.5,
    ...(options.expected && { allowances: expectingAllowances(options.expected) }),
  });
  schedulers.push(scheduler);
  const calls: { at: number; line: string }[] = [];
  const counts = new Map<string, number>();
  const log: string[] = [];
  let next = 0;
  const held = new Map<string, () => void>();
  const holding = new Map<string, Promise<void>>();
  for (const method of Object.keys(options.hold ?? {})) {
    holding.set(
      method,
      new Promise<void>((resolve) => {
        held.set(method, resolve);
      }),
    );
  }
  const call = async (method: string, line: string) => {
    const n = (counts.get(method) ?? 0) + 1;
    counts.set(method, n);
    calls.push({ at: clock.now() - start, line });
    log.push(line);
    const failure = options.fail?.[method]?.[n];
    if (failure) throw failure();
    if (options.hold?.[method] === n) await holding.get(method);
  };
  const start = clock.now();
  const chunks = (list: StreamChunk[]) => list.map(describeChunk).join(" | ");
  /** What each stop carried, in order. */
  const stops: StopStreamArgs[] = [];
  /** The block types of each update, in order: `9.1 markdown,context`. */
  const updated: string[] = [];
  const slack = {
    startStream: async (args: { chunks: StreamChunk[]; recipient_user_id: string }) => {
      const ts = `9.${++next}`;
      await call("start", `start ${ts} for ${args.recipient_user_id} [${chunks(args.chunks)}]`);
      return { ts };
    },
    appendStream: async (args: { ts: string; chunks: StreamChunk[] }) => {
      await call("append", `append ${args.ts} [${chunks(args.chunks)}]`);
    },
    stopStream: async (args: StopStreamArgs) => {
      stops.push(args);
      const carried = args.chunks ? ` [${chunks(args.chunks)}]` : "";
      const under = args.blocks ? ` +blocks(${args.blocks.map((b) => b.type).join(",")})` : "";
      await call(
        "stop",
        `stop ${args.ts} part ${args.metadata?.event_payload.part}${carried}${under}`,
      );
    },
  };
  const pacer = new Pacer<ReplyPayload>(
    async (target, payload) => {
      updated.push(`${target.ts} ${payload.blocks.map((b) => b.type).join(",")}`);
      await call("update", `update ${target.ts} ${payload.text}`);
    },
    { scheduler, ...(options.pacer ?? { updatesPerMinute: 600, burst: 10 }) },
  );
  const edits = new PacedEdits({
    client: () => ({
      postMessage: async (args) => {
        const ts = `9.${++next}`;
        await call("post", `post ${ts} ${args.text}`);
        return { ts };
      },
      deleteMessage: async (args) => call("delete", `delete ${args.ts}`),
    }),
    pacer,
    postGate: new PostGate({ scheduler }),
    findMessage: async () => undefined,
  });
  const stopped: string[] = [];
  const refused: string[] = [];
  const errors: string[] = [];
  const native = new NativeStream({
    slack: () => slack,
    gate: new StreamGate({
      scheduler,
      ...(options.startsPerMinute ? { startsPerMinute: options.startsPerMinute } : {}),
      ...(options.appendsPerMinute ? { appendsPerMinute: options.appendsPerMinute } : {}),
    }),
    edits,
    clock,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.firstWordsWaitMs ? { firstWordsWaitMs: options.firstWordsWaitMs } : {}),
    findUnmarked: async ({ after }) => {
      log.push(`look after ${after}`);
      return options.unmarked;
    },
    onStoppedByUser: (target) => stopped.push(target.turnId),
    onRefused: (_target, reason) => refused.push(reason),
    onError: (_error, what) => errors.push(what),
  });
  const recorded: string[] = [];
  const recorder = {
    parts: async (parts: string[]) => {
      recorded.push(`parts ${parts.join(",")}`);
      log.push(`record parts ${parts.join(",")}`);
    },
    posting: async (part: number) => {
      recorded.push(`posting ${part}`);
      log.push(`record posting ${part}`);
    },
  };
  const target = (more: Partial<ReplyTarget> = {}): ReplyTarget => ({
    turnId: "turn-1",
    team: "T1",
    channel: "C1",
    threadTs: "1.1",
    asker: "U1",
    askedTs: "1.1",
    parts: [],
    ...more,
  });
  const render = (more: Partial<ReplyTarget> = {}) => native.render(target(more), recorder);
  /** Lets the clock run a second at a time until `work` settles. */
  const settle = async <T>(work: Promise<T>): Promise<T> => {
    let done = false;
    const watched = work.finally(() => {
      done = true;
    });
    while (!done) await clock.advance(1_000);
    return watched;
  };
  /** Whether `work` has settled, once what is due now has run. */
  const settled = async (work: Promise<unknown>): Promise<boolean> => {
    let done = false;
    void work.finally(() => {
      done = true;
    });
    await clock.advance(0);
    return done;
  };
  const lines = () => calls.map((c) => c.line);
  /** The calls as `at line`, from the `from`th on. */
  const timed = (from = 0) => calls.slice(from).map((c) => `${c.at} ${c.line}`);
  return {
    release: (method: string) => held.get(method)?.(),
    clock,
    calls,
    lines,
    timed,
    log,
    native,
    edits,
    recorder,
    recorded,
    render,
    target,
    settle,
    settled,
    stopped,
    refused,
    errors,
    stops,
    updated,
  };
}

const view = (
  body: string,
  phase: ReplyView["phase"] = { kind: "working" },
  steps?: ReplyView["steps"],
): ReplyView => ({ body, phase, notes: [], ...(steps ? { steps } : {}) });

const done = (body: string): ReplyView => view(body, { kind: "completed", modelUsed: "m-1" });

/**
 * Writes `count` words into `reply`, "w1 w2 … ", one every `everyMs` from now, then lets the
 * clock run a second more (the text pauses).
 */
async function grow(
  s: ReturnType<typeof setup>,
  reply: ReplyRenderer,
  count: number,
  everyMs = 100,
): Promise<void> {
  const words: string[] = [];
  for (let i = 1; i <= count; i++) {
    words.push(`w${i}`);
    reply.show(view(`${words.join(" ")} `));
    await s.clock.advance(everyMs);
  }
  await s.clock.advance(1_000);
}

/** The blocks a stop puts under a completed answer: "Answered by m-1", the feedback buttons. */
const UNDER = "+blocks(context,context_actions)";

describe("NativeStream", () => {
  it("starts the stream at once, shows the first whole words at once and the next a second later, and ends with one stop carrying the rest", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    reply.show(view("Hello wor"));
    await s.clock.advance(0);
    reply.show(view("Hello world, and more "));
    await s.clock.advance(500);
    reply.show(view("Hello world, and more words "));
    await s.clock.advance(499);
    expect(s.calls.map((c) => c.at)).toEqual([0, 0]);
    await s.clock.advance(1);
    await s.clock.advance(250);
    await s.settle(reply.finish(done("Hello world, and more words.")));
    expect(s.timed()).toEqual([
      "0 start 9.1 for U1 [task:reply-status=in_progress:Starting… | stop-button]",
      "0 append 9.1 [task:reply-status=complete:Starting | text:Hello ]",
      // The newest text when the append goes; "words" is still being written.
      "1000 append 9.1 [text:world, and more ]",
      `1250 stop 9.1 part 0 [text:words.] ${UNDER}`,
      // The final layout, in the background.
      "1250 update 9.1 Hello world, and more words.",
    ]);
    expect(s.recorded).toEqual(["posting 0", "parts 9.1"]);
  });

  it("ends a completed answer with one stop carrying the rest and the blocks under it, then the tidy edit", async () => {
    const s = setup({ hold: { stop: 1, update: 1 } });
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("The answer is "));
    await s.clock.advance(100);
    const finished = reply.finish(done("The answer is 42."));
    // Slack has not answered the stop yet: the turn waits for it.
    expect(await s.settled(finished)).toBe(false);
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:The answer ]",
      `100 stop 9.1 part 0 [text:is 42.] ${UNDER}`,
    ]);
    const stop = s.stops[0];
    expect(JSON.stringify(stop?.blocks)).toContain("Answered by m-1");
    expect(JSON.stringify(stop?.blocks)).not.toContain("stop_run");
    expect(stop?.metadata?.event_payload).toEqual({ turn: "turn-1", part: 0 });
    s.release("stop");
    // The stop landed: Slack shows the answer whole; the turn ends once the tidy edit did (a
    // bot killed before it leaves the turn to be resumed, and the Stop button taken away then).
    expect(await s.settled(finished)).toBe(false);
    expect(s.timed(3)).toEqual(["100 update 9.1 The answer is 42."]);
    // The final layout: the answer, the model, the feedback buttons, and no Stop button.
    expect(s.updated).toEqual(["9.1 markdown,context,context_actions"]);
    s.release("update");
    expect(await s.settled(finished)).toBe(true);
    await s.clock.advance(1_000);
    expect(s.lines()).toHaveLength(4);
    expect(s.errors).toEqual([]);
  });

  it("marks a status card still shown as done in the stop that ends a completed answer", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    await s.settle(reply.finish(done("Short answer.")));
    expect(s.timed()).toEqual([
      "0 start 9.1 for U1 [task:reply-status=in_progress:Working… | stop-button]",
      `0 stop 9.1 part 0 [task:reply-status=complete:Working | text:Short answer.] ${UNDER}`,
      "0 update 9.1 Short answer.",
    ]);
  });

  it("ends a stopped answer with a quiet stop and the final edit, which finish waits for", async () => {
    const s = setup({ hold: { update: 1 } });
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("One two three"));
    await s.clock.advance(100);
    const finished = reply.finish(view("One two three", { kind: "stopped", by: "U1" }));
    expect(await s.settled(finished)).toBe(false);
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:One two ]",
      "100 stop 9.1 part 0",
      "100 update 9.1 One two three\n\nStopped by U1.",
    ]);
    await s.clock.advance(1_000);
    expect(await s.settled(finished)).toBe(false);
    s.release("update");
    expect(await s.settled(finished)).toBe(true);
  });

  it("ends a completed answer whose text changed at the end with a quiet stop and the final edit", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Draft one "));
    await s.clock.advance(1_000);
    await s.settle(reply.finish(done("Final answer.")));
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:Draft ]",
      "1000 append 9.1 [text:one ]",
      "1000 stop 9.1 part 0",
      "1000 update 9.1 Final answer.",
    ]);
  });

  it("ends a completed answer whose rest does not fit in its message with a quiet stop and the final edits", async () => {
    const s = setup({ limits: { softLimit: 60, hardLimit: 300 } });
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Intro line "));
    await s.clock.advance(100);
    // Past the soft limit, the message would end at this line: the rest needs a new one.
    const body = `Intro line ${"and more words ".repeat(5)}\nA second line.\nA third.`;
    await s.settle(reply.finish(done(body)));
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:Intro ]",
      "100 stop 9.1 part 0",
      `100 update 9.1 ${body}`,
    ]);
  });

  it("ends a completed answer holding a table a table block shows with a quiet stop and the final edit that lays it out", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Prices: "));
    await s.clock.advance(100);
    const body = "Prices:\n\n| a | b |\n|---|--:|\n| 1 | 2 |";
    await s.settle(reply.finish(done(body)));
    // The stream showed the words as Markdown; its stop carries none of the rest, no blocks.
    expect(s.timed().slice(-2)).toEqual(["100 stop 9.1 part 0", `100 update 9.1 ${body}`]);
    expect(s.updated).toEqual(["9.1 markdown,table,context,context_actions"]);
  });

  it("when the stop carrying the rest fails, stops quietly and ends with the final edit", async () => {
    const s = setup({ fail: { stop: { 1: () => slackError("invalid_blocks") } } });
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Almost there "));
    await s.clock.advance(100);
    await s.settle(reply.finish(done("Almost there now.")));
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:Almost ]",
      `100 stop 9.1 part 0 [text:there now.] ${UNDER}`,
      "100 stop 9.1 part 0",
      "100 update 9.1 Almost there now.",
    ]);
    expect(s.errors).toEqual(["end a stream with its last words"]);
  });

  it("with a wait for the first words, starts the stream once it has a whole word to show", async () => {
    const s = setup({ firstWordsWaitMs: 1_500 });
    const reply = s.render();
    const opened = reply.open(view("", { kind: "starting" }));
    // The word being written waits: "## Hello" alone has nothing to show yet.
    reply.show(view("## Hello"));
    await s.clock.advance(500);
    expect(s.lines()).toEqual([]);
    reply.show(view("## Hello wo"));
    await s.clock.advance(0);
    await opened;
    expect(s.timed()).toEqual(["500 start 9.1 for U1 [stop-button | text:## Hello ]"]);
  });

  it("with a wait for the first words, has the start's budget taken ahead while it waits", async () => {
    const told: string[] = [];
    const s = setup({ firstWordsWaitMs: 1_500, expected: told });
    const reply = s.render();
    const opened = reply.open(view("", { kind: "starting" }));
    // Kept in a database, the workspace's window of starts takes for this one now.
    expect(told).toEqual(["chat.startStream"]);
    reply.show(view("Hello wo"));
    await s.clock.advance(0);
    await opened;
    expect(s.timed()).toEqual(["0 start 9.1 for U1 [stop-button | text:Hello ]"]);
    expect(told).toHaveLength(1);
  });

  it("with a wait for the first words, starts the stream without them when they are late", async () => {
    const s = setup({ firstWordsWaitMs: 1_500 });
    const reply = s.render();
    const opened = reply.open(view("", { kind: "starting" }));
    await s.clock.advance(1_499);
    expect(s.lines()).toEqual([]);
    await s.clock.advance(1);
    await opened;
    expect(s.lines()).toEqual([
      "start 9.1 for U1 [task:reply-status=in_progress:Starting… | stop-button]",
    ]);
  });

  it("records the stream's part before starting it and its ts once started", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    expect(s.log).toEqual([
      "record posting 0",
      "start 9.1 for U1 [task:reply-status=in_progress:Starting… | stop-button]",
      "record parts 9.1",
    ]);
  });

  it("starts 19 streams in any 61 s, and puts the first words on a start that waited for the window", async () => {
    const s = setup();
    // One question in each of 20 channels: the workspace's window of starts decides.
    const replies = Array.from({ length: 20 }, (_, i) =>
      s.render({ turnId: `t${i}`, channel: `C${i}` }),
    );
    const opened = replies.map((r) => r.open(view("", { kind: "starting" })));
    await s.clock.advance(0);
    expect(s.calls.map((c) => c.at)).toEqual(Array(19).fill(0));
    replies[19]?.show(view("Early words here"));
    await s.clock.advance(60_999);
    expect(s.lines()).toHaveLength(19);
    await s.clock.advance(1);
    await opened[19];
    expect(s.timed(19)).toEqual(["61000 start 9.20 for U1 [stop-button | text:Early words here]"]);
  });

  it("holds the word being written back while the text grows, and lets it go once the text pauses", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Half a wor"));
    await s.clock.advance(999);
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:Half a ]",
    ]);
    await s.clock.advance(1);
    expect(s.timed(2)).toEqual(["1000 append 9.1 [text:wor]"]);
  });

  it("streams a run longer than 40 characters (a link) up to its last character while it grows", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    const link = `https://example.com/${"a".repeat(20)}`;
    // 40 characters: a word, which waits whole.
    reply.show(view(`See ${link}`));
    await s.clock.advance(500);
    reply.show(view(`See ${link}bc`));
    await s.clock.advance(500);
    await s.clock.advance(500);
    reply.show(view(`See ${link}bcd and`));
    await s.clock.advance(500);
    await s.clock.advance(1_000);
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:See ]",
      `1000 append 9.1 [text:${link}b]`,
      "2000 append 9.1 [text:cd ]",
      "3000 append 9.1 [text:and]",
    ]);
  });

  it("appends to a message at most once a second, the newest whole words each time", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    await grow(s, reply, 25);
    await s.clock.advance(1_000);
    expect(s.timed(1)).toEqual([
      "100 append 9.1 [task:reply-status=complete:Working | text:w1 ]",
      "1100 append 9.1 [text:w2 w3 w4 w5 w6 w7 w8 w9 w10 ]",
      "2100 append 9.1 [text:w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 ]",
      "3100 append 9.1 [text:w21 w22 w23 w24 ]",
      // The text paused at 2.4 s: the last word may go at 3.4 s, and goes a second after
      // the append before it.
      "4100 append 9.1 [text:w25 ]",
    ]);
  });

  it("keeps the workspace's appends within the minute's window, carrying what waited", async () => {
    const s = setup({ appendsPerMinute: 5 });
    const reply = s.render();
    await reply.open(view(""));
    await grow(s, reply, 40, 250);
    await s.clock.advance(60_000);
    const appends = s.calls.filter((c) => c.line.startsWith("append"));
    // A second apart until the window is spent, then once the first of them is 61 s old.
    expect(appends.map((c) => c.at)).toEqual([250, 1250, 2250, 3250, 4250, 61250]);
    expect(appends.at(-1)?.line.endsWith("w39 w40 ]")).toBe(true);
  });

  it("ends at once when the answer finishes while an append waits for the window: the stop carries its words", async () => {
    const s = setup({ appendsPerMinute: 5 });
    const reply = s.render();
    await reply.open(view(""));
    await grow(s, reply, 40, 250);
    // The sixth append waits for the window; the answer ends meanwhile, at 12 s.
    await s.clock.advance(1_000);
    const before = s.calls.length;
    const word = (i: number) => `w${i}`;
    const written = Array.from({ length: 40 }, (_, i) => word(i + 1)).join(" ");
    // The fifth append, at 4.25 s, showed up to w16 (w17 was being written).
    const rest = Array.from({ length: 24 }, (_, i) => word(i + 17)).join(" ");
    const ended = reply.finish(done(`${written}.`));
    expect(await s.settled(ended)).toBe(true);
    expect(s.timed(before)).toEqual([
      `12000 stop 9.1 part 0 [text:${rest}.] ${UNDER}`,
      // Nothing else waits for the edits: the tidy edit goes at once.
      `12000 update 9.1 ${written}.`,
    ]);
    // The withdrawn append never goes, even once the window has room again.
    await s.clock.advance(60_000);
    expect(s.calls.filter((c) => c.line.startsWith("append"))).toHaveLength(5);
  });

  it("sends the tidy edit of a streamed answer after every other edit of the pacer", async () => {
    const s = setup({ pacer: { updatesPerMinute: 60, burst: 1 } });
    const a = s.render();
    await a.open(view(""));
    a.show(view("Answer A is "));
    await s.clock.advance(100);
    // Another reply, edited, in another channel: its first edit spends the pacer's token.
    const b = s.edits.render(s.target({ turnId: "b", channel: "C2" }), s.recorder);
    await b.open(view("", { kind: "starting" }));
    b.show(view("B first"));
    await s.clock.advance(0);
    // A's answer is whole with its stop; its tidy edit waits for the pacer, and its turn for it.
    const finished = a.finish(done("Answer A is here."));
    expect(await s.settled(finished)).toBe(false);
    b.show(view("B first and second"));
    await s.clock.advance(2_000);
    expect(await s.settled(finished)).toBe(true);
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:Answer A ]",
      "100 post 9.2 Starting…",
      "100 update 9.2 B first",
      `100 stop 9.1 part 0 [text:is here.] ${UNDER}`,
      // B's interim edit waited less, but a tidy edit goes after every other.
      "1100 update 9.2 B first and second",
      "2100 update 9.1 Answer A is here.",
    ]);
  });

  it("shows the run's steps as task cards, only what changed", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    const search = { id: "s1", title: "Searching the docs", status: "in_progress" as const };
    reply.show(view("", { kind: "working" }, [search]));
    await s.clock.advance(1_000);
    reply.show(
      view("Found it ", { kind: "working" }, [
        { ...search, status: "complete", details: "3 pages" },
      ]),
    );
    await s.clock.advance(1_000);
    expect(s.timed()).toEqual([
      "0 start 9.1 for U1 [task:reply-status=in_progress:Working… | stop-button]",
      "0 append 9.1 [task:step-s1=in_progress:Searching the docs]",
      "1000 append 9.1 [task:reply-status=complete:Working | task:step-s1=complete:Searching the docs:3 pages | text:Found ]",
      "2000 append 9.1 [text:it ]",
    ]);
  });

  it("continues a long answer in a new message, closing and reopening the code block it cuts, and ends it with the final edits", async () => {
    const s = setup({ limits: { softLimit: 60, hardLimit: 300 } });
    const reply = s.render();
    await reply.open(view(""));
    const code = `\`\`\`js\n${Array.from({ length: 30 }, (_, i) => `f(${i});`).join("\n")}\n\`\`\`\n`;
    const body = `Intro text.\n${code}End of it.`;
    reply.show(view(body));
    for (let i = 0; i < 5; i++) await s.clock.advance(1_000);
    await s.settle(reply.finish(done(body)));
    const starts = s.lines().filter((l) => l.startsWith("start"));
    expect(starts).toHaveLength(2);
    expect(starts[1]).toMatch(/^start 9\.2 for U1 \[stop-button \| text:```js\nf\(27\);/);
    const first = s.lines().find((l) => l.startsWith("append 9.1"));
    expect(first).toMatch(/\n```\]$/);
    expect(s.log).toContain("stop 9.1 part 0");
    expect(s.log.indexOf("stop 9.1 part 0")).toBeLessThan(s.log.indexOf("record posting 1"));
    expect(s.recorded).toContain("parts 9.1,9.2");
    // An answer in more than one message: its last stream is stopped quietly, and the final
    // edits make the messages exact in the edits' own split (here one message) before the
    // turn ends.
    expect(s.timed().slice(-3, -2)).toEqual(["5000 stop 9.2 part 1"]);
    expect(s.timed().slice(-2).sort()).toEqual([
      "5000 delete 9.2",
      expect.stringMatching(/^5000 update 9\.1 Intro text\.\n```js\nf\(0\);[\s\S]*End of it\.$/),
    ]);
    expect(s.recorded.at(-1)).toBe("parts 9.1");
  });

  it("renews a stream that is given nothing for four minutes, before Slack would end it", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Thinking about it "));
    await s.clock.advance(1_000);
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:Thinking about ]",
      "1000 append 9.1 [text:it ]",
    ]);
    await s.clock.advance(239_999);
    expect(s.lines()).toHaveLength(3);
    await s.clock.advance(1);
    expect(s.timed(3)).toEqual(["241000 append 9.1 [task:reply-status=in_progress:Writing…]"]);
    reply.show(view("Thinking about it again and "));
    await s.clock.advance(1_000);
    expect(s.timed(4)).toEqual([
      // The renewal was an append: the next one waits its second.
      "242000 append 9.1 [task:reply-status=complete:Writing | text:again and ]",
    ]);
  });

  it("still renews when the renewal comes due while an append is on its way", async () => {
    const s = setup({ hold: { append: 2 } });
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Thinking about it "));
    await s.clock.advance(1_000);
    expect(s.timed(2)).toEqual(["1000 append 9.1 [text:it ]"]);
    // Slack has not answered that append when four minutes have passed.
    await s.clock.advance(240_000);
    s.release("append");
    await s.clock.advance(1);
    expect(s.timed(3)).toEqual(["241000 append 9.1 [task:reply-status=in_progress:Writing…]"]);
  });

  it("tells who stopped it in Slack, and ends with an edit", async () => {
    const s = setup({ fail: { append: { 2: () => slackError("stopped_by_user") } } });
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("One "));
    await s.clock.advance(1_000);
    reply.show(view("One two "));
    await s.clock.advance(1_000);
    expect(s.stopped).toEqual(["turn-1"]);
    await s.settle(reply.finish(view("One two", { kind: "stopped", by: "U1" })));
    expect(s.timed(1)).toEqual([
      // Each word waits until the text pauses: "One" alone is the word being written.
      "1000 append 9.1 [task:reply-status=complete:Working | text:One ]",
      "2000 append 9.1 [text:two ]",
      // Slack answered stopped_by_user: no stop is sent, the edits show the view, then the end.
      "2000 update 9.1 One two ",
      "2000 update 9.1 One two\n\nStopped by U1.",
    ]);
  });

  it("goes on in a new message when Slack ended the stream", async () => {
    const s = setup({
      fail: { append: { 2: () => slackError("message_not_in_streaming_state") } },
    });
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("First words "));
    await s.clock.advance(1_000);
    reply.show(view("First words and more "));
    await s.clock.advance(1_000);
    await s.clock.advance(1_000);
    expect(s.timed()).toEqual([
      "0 start 9.1 for U1 [task:reply-status=in_progress:Working… | stop-button]",
      "0 append 9.1 [task:reply-status=complete:Working | text:First ]",
      "1000 append 9.1 [text:words ]",
      "1000 stop 9.1 part 0",
      // The new message begins where the one Slack ended stopped taking words.
      "1000 start 9.2 for U1 [stop-button | text:words ]",
      // A new message has a pace of its own: its first append goes at once.
      "1000 append 9.2 [text:and ]",
      "2000 append 9.2 [text:more ]",
    ]);
    expect(s.recorded.at(-1)).toBe("parts 9.1,9.2");
  });

  it("is edited instead where Slack will not stream, and says so", async () => {
    const s = setup({ fail: { start: { 1: () => slackError("channel_type_not_supported") } } });
    const reply = s.render();
    await s.settle(reply.open(view("", { kind: "starting" })));
    await s.settle(reply.finish(done("Answer.")));
    expect(s.refused).toEqual(["channel_type_not_supported"]);
    expect(s.lines().slice(1)).toEqual(["post 9.2 Starting…", "update 9.2 Answer."]);
  });

  it("finds a start Slack took but answered 500 for, rather than starting a second", async () => {
    const s = setup({ fail: { start: { 1: serverError } }, unmarked: "9.1" });
    const reply = s.render();
    await s.settle(reply.open(view("", { kind: "starting" })));
    expect(s.lines().filter((l) => l.startsWith("start"))).toHaveLength(1);
    expect(s.log).toContain("look after 1.1");
    expect(s.recorded).toEqual(["posting 0", "parts 9.1"]);
  });

  it("goes on as edits in the same message when the text shown changes under the stream", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Draft one "));
    await s.clock.advance(1_000);
    reply.show(view("Rewritten answer "));
    await s.clock.advance(1_000);
    await s.clock.advance(1_000);
    expect(s.timed(1)).toEqual([
      "0 append 9.1 [task:reply-status=complete:Working | text:Draft ]",
      "1000 append 9.1 [text:one ]",
      // The text no longer begins with what was streamed: the stream stops at once.
      "1000 stop 9.1 part 0",
      "1000 update 9.1 Rewritten answer ",
    ]);
  });

  it("after a restart stops the stream it finds and edits it, posting nothing", async () => {
    const s = setup({ unmarked: "9.4" });
    const reply = await s.native.resume(s.target({ postsAttempted: 1 }), s.recorder);
    await s.settle(reply.open(view("", { kind: "working" })));
    await s.settle(reply.finish(done("Done.")));
    expect(s.lines()).toEqual(["stop 9.4 part 0", "update 9.4 Done."]);
    expect(s.recorded).toEqual(["parts 9.4"]);
  });
});
