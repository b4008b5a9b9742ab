import { afterEach, describe, expect, it } from "vitest";
import type { ReplyTarget, ReplyView } from "../../src/bridge/ports.js";
import { NativeStream } from "../../src/slack/native-stream.js";
import { Pacer } from "../../src/slack/pacer.js";
import { PostGate } from "../../src/slack/post-gate.js";
import { PacedEdits } from "../../src/slack/reply.js";
import type { ReplyPayload } from "../../src/slack/reply-blocks.js";
import { CallScheduler } from "../../src/slack/scheduler.js";
import { StreamGate } from "../../src/slack/stream-gate.js";
import type { StopStreamArgs, StreamChunk } from "../../src/slack/web-api.js";
import { ManualClock } from "../support/manual-clock.js";

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
  channelPace?: boolean;
  firstWordsWaitMs?: number;
  startsPerMinute?: number;
  /** The answer to this append (1-based) waits until `releaseAppend()`. */
  holdAppend?: number;
}

/**
 * NativeStream over the real scheduler, stream gate, pacer and post gate, on a manual clock,
 * with a client that records every call as a line (`start 9.1 [chunks]`, `append 9.1 […]`,
 * `stop 9.1 part 0`, `update 9.1 text`, `post 9.2 text`) and the time it went.
 */
function setup(options: Options = {}) {
  const clock = new ManualClock();
  const scheduler = new CallScheduler({ clock, random: () => 0.5 });
  schedulers.push(scheduler);
  const calls: { at: number; line: string }[] = [];
  const counts = new Map<string, number>();
  const log: string[] = [];
  let next = 0;
  const call = (method: string, line: string) => {
    const n = (counts.get(method) ?? 0) + 1;
    counts.set(method, n);
    calls.push({ at: clock.now() - start, line });
    log.push(line);
    const failure = options.fail?.[method]?.[n];
    if (failure) throw failure();
  };
  const start = clock.now();
  let releaseAppend = () => {};
  const appendHeld = new Promise<void>((resolve) => {
    releaseAppend = resolve;
  });
  const chunks = (list: StreamChunk[]) => list.map(describeChunk).join(" | ");
  const slack = {
    startStream: async (args: { chunks: StreamChunk[]; recipient_user_id: string }) => {
      const ts = `9.${++next}`;
      call("start", `start ${ts} for ${args.recipient_user_id} [${chunks(args.chunks)}]`);
      return { ts };
    },
    appendStream: async (args: { ts: string; chunks: StreamChunk[] }) => {
      call("append", `append ${args.ts} [${chunks(args.chunks)}]`);
      if (counts.get("append") === options.holdAppend) await appendHeld;
    },
    stopStream: async (args: StopStreamArgs) => {
      call("stop", `stop ${args.ts} part ${args.metadata?.event_payload.part}`);
    },
  };
  const pacer = new Pacer<ReplyPayload>(
    async (target, payload) => call("update", `update ${target.ts} ${payload.text}`),
    { scheduler, updatesPerMinute: 600, burst: 10 },
  );
  const edits = new PacedEdits({
    client: () => ({
      postMessage: async (args) => {
        const ts = `9.${++next}`;
        call("post", `post ${ts} ${args.text}`);
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
  const native = new NativeStream({
    slack: () => slack,
    gate: new StreamGate({
      scheduler,
      ...(options.startsPerMinute ? { startsPerMinute: options.startsPerMinute } : {}),
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
  });
  const recorded: string[] = [];
  const recorder = {
    parts: (parts: string[]) => {
      recorded.push(`parts ${parts.join(",")}`);
      log.push(`record parts ${parts.join(",")}`);
    },
    posting: (part: number) => {
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
  const lines = () => calls.map((c) => c.line);
  return {
    releaseAppend: () => releaseAppend(),
    clock,
    calls,
    lines,
    log,
    native,
    recorder,
    recorded,
    render,
    target,
    settle,
    stopped,
    refused,
  };
}

const view = (
  body: string,
  phase: ReplyView["phase"] = { kind: "working" },
  steps?: ReplyView["steps"],
): ReplyView => ({ body, phase, notes: [], ...(steps ? { steps } : {}) });

const done = (body: string): ReplyView => view(body, { kind: "completed", modelUsed: "m-1" });

describe("NativeStream", () => {
  it("starts the stream at once, shows the first words at once and the next a second later, and ends with the final edit", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view("", { kind: "starting" }));
    reply.show(view("Hello wor"));
    await s.clock.advance(0);
    reply.show(view("Hello world, and more "));
    await s.clock.advance(0);
    reply.show(view("Hello world, and more words "));
    await s.clock.advance(999);
    expect(s.calls.map((c) => c.at)).toEqual([0, 0]);
    await s.clock.advance(1);
    await s.settle(reply.finish(done("Hello world, and more words.")));
    expect(s.lines()).toEqual([
      "start 9.1 for U1 [task:reply-status=in_progress:Starting… | stop-button]",
      "append 9.1 [task:reply-status=complete:Starting | text:Hello wo]",
      "append 9.1 [text:rld, and more words ]",
      "stop 9.1 part 0",
      "update 9.1 Hello world, and more words.",
    ]);
    expect(s.calls.map((c) => c.at)).toEqual([0, 0, 1_000, 1_000, 1_000]);
    expect(s.recorded).toEqual(["posting 0", "parts 9.1"]);
  });

  it("with a wait for the first words, starts the stream carrying them", async () => {
    const s = setup({ firstWordsWaitMs: 1_500 });
    const reply = s.render();
    const opened = reply.open(view("", { kind: "starting" }));
    reply.show(view("## H"));
    await s.clock.advance(500);
    expect(s.lines()).toEqual([]);
    reply.show(view("## Hello wo"));
    await s.clock.advance(0);
    await opened;
    expect(s.lines()).toEqual(["start 9.1 for U1 [stop-button | text:## Hello w]"]);
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

  it("puts the first words on a start that waited for the workspace's window", async () => {
    const s = setup({ startsPerMinute: 2 });
    // Two starts go at once, in one channel; the third waits for the minute's window to move.
    const replies = [
      s.render({ turnId: "a" }),
      s.render({ turnId: "b" }),
      s.render({ turnId: "c" }),
    ];
    const opened = replies.map((r) => r.open(view("", { kind: "starting" })));
    await s.clock.advance(0);
    expect(s.lines()).toHaveLength(2);
    replies[2]?.show(view("Early words here"));
    await s.clock.advance(60_000);
    await Promise.all(opened);
    expect(s.lines()[2]).toBe("start 9.3 for U1 [stop-button | text:Early words here]");
  });

  it("holds the last character back while the text grows, and lets it go once the text pauses", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Half"));
    await s.clock.advance(999);
    expect(s.lines().slice(1)).toEqual([
      "append 9.1 [task:reply-status=complete:Working | text:Hal]",
    ]);
    await s.clock.advance(1);
    expect(s.lines().slice(2)).toEqual(["append 9.1 [text:f]"]);
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
    expect(s.lines()).toEqual([
      "start 9.1 for U1 [task:reply-status=in_progress:Working… | stop-button]",
      "append 9.1 [task:step-s1=in_progress:Searching the docs]",
      "append 9.1 [task:reply-status=complete:Working | task:step-s1=complete:Searching the docs:3 pages | text:Found i]",
      "append 9.1 [text:t ]",
    ]);
  });

  it("continues a long answer in a new message, closing and reopening the code block it cuts", async () => {
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
    expect(starts[1]).toMatch(/^start 9\.2 for U1 \[stop-button \| text:```js\nf\(/);
    const first = s.lines().find((l) => l.startsWith("append 9.1"));
    expect(first).toMatch(/\n```\]$/);
    expect(s.log).toContain("stop 9.1 part 0");
    expect(s.log.indexOf("stop 9.1 part 0")).toBeLessThan(s.log.indexOf("record posting 1"));
    expect(s.recorded).toContain("parts 9.1,9.2");
    // The final edits make the messages exact in the edits' own split: here one message.
    expect(s.lines().slice(-2).sort()).toEqual([
      "delete 9.2",
      expect.stringMatching(/^update 9\.1 Intro text\.\n```js\nf\(0\);/),
    ]);
    expect(s.recorded.at(-1)).toBe("parts 9.1");
  });

  it("renews a stream that is given nothing for four minutes, before Slack would end it", async () => {
    const s = setup();
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Thinking about it "));
    await s.clock.advance(1_000);
    expect(s.lines().slice(2)).toEqual(["append 9.1 [text:t ]"]);
    await s.clock.advance(239_999);
    expect(s.lines()).toHaveLength(3);
    await s.clock.advance(1);
    expect(s.lines()[3]).toBe("append 9.1 [task:reply-status=in_progress:Writing…]");
    expect(s.calls[3]?.at).toBe(241_000);
    reply.show(view("Thinking about it again "));
    await s.clock.advance(1_000);
    expect(s.lines().slice(4)).toEqual([
      "append 9.1 [task:reply-status=complete:Writing | text:again ]",
    ]);
  });

  it("still renews when the renewal comes due while an append is on its way", async () => {
    const s = setup({ holdAppend: 2 });
    const reply = s.render();
    await reply.open(view(""));
    reply.show(view("Thinking about it "));
    await s.clock.advance(1_000);
    expect(s.lines().slice(2)).toEqual(["append 9.1 [text:t ]"]);
    // Slack has not answered that append when four minutes have passed.
    await s.clock.advance(240_000);
    s.releaseAppend();
    await s.clock.advance(1);
    expect(s.lines()[3]).toBe("append 9.1 [task:reply-status=in_progress:Writing…]");
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
    expect(s.lines().filter((l) => l.startsWith("stop"))).toEqual([]);
    expect(s.lines().at(-1)).toBe("update 9.1 One two\n\nStopped by U1.");
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
    expect(s.lines()).toEqual([
      "start 9.1 for U1 [task:reply-status=in_progress:Working… | stop-button]",
      "append 9.1 [task:reply-status=complete:Working | text:First word]",
      "append 9.1 [text:s ]",
      "stop 9.1 part 0",
      "start 9.2 for U1 [stop-button | text:s ]",
      "append 9.2 [text:and mor]",
      "append 9.2 [text:e ]",
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
    expect(s.lines().slice(3)).toEqual(["stop 9.1 part 0", "update 9.1 Rewritten answer "]);
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
