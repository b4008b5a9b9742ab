import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fetch } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ProtocolError } from "../../src/service/errors.js";
import {
  type RunStreamOptions,
  type RunStreamUpdate,
  readRunStream,
} from "../../src/service/run-stream.js";

const encoder = new TextEncoder();
/** Lets the body's own cleanup (which runs a few microtasks after return()) finish. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A body yielding the given chunks; `state.returned` tells whether it was let go early. */
function body(chunks: (string | Uint8Array)[], end?: Error) {
  const state = { returned: false, finished: false };
  async function* generate() {
    try {
      for (const chunk of chunks) yield typeof chunk === "string" ? encoder.encode(chunk) : chunk;
      if (end) throw end;
      state.finished = true;
    } finally {
      if (!state.finished && !end) state.returned = true;
    }
  }
  return { body: generate(), state };
}

async function collect(
  chunks: (string | Uint8Array)[],
  options?: RunStreamOptions,
): Promise<RunStreamUpdate[]> {
  const updates: RunStreamUpdate[] = [];
  for await (const update of readRunStream(body(chunks).body, options)) updates.push(update);
  return updates;
}

const texts = (updates: RunStreamUpdate[]) =>
  updates.flatMap((u) => (u.type === "text" ? [u.text] : []));

const run = (status: string, text?: string) =>
  JSON.stringify({
    id: "3f0c9d6e-8a51-4a0b-9a3e-2f1d5c7b9e10",
    threadId: "9b2e4f1a-0c3d-4e5f-8a7b-6c5d4e3f2a1b",
    assistantId: "asst",
    status,
    output: text === undefined ? null : [{ type: "text", text }],
    error: null,
  });

const step = (
  id: string,
  title: string,
  status: "pending" | "in_progress" | "complete" | "error",
  details?: string,
): RunStreamUpdate => ({
  type: "step",
  step: details === undefined ? { id, title, status } : { id, title, status, details },
});

/** Streams in several dialects, each with the updates it must produce. */
const DIALECTS: Record<string, { stream: string; expected: (string | RunStreamUpdate)[] }> = {
  "OpenAI chat chunks": {
    stream:
      'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n' +
      'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n' +
      'data: {"choices":[{"delta":{"content":"lo 👋 世界"}}]}\n\n' +
      'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n' +
      "data: [DONE]\n\n" +
      'data: {"choices":[{"delta":{"content":"after the end"}}]}\n\n',
    expected: ["Hel", "Hello 👋 世界", { type: "end", reason: "done" }],
  },
  "named increments and statuses": {
    stream:
      'event: status\ndata: {"status":"queued"}\n\n' +
      'event: run.status\ndata: {"status":"in_progress"}\n\n' +
      'event: delta\ndata: {"text":"Bonjour"}\n\n' +
      'event: token\ndata: {"text":", 世界"}\n\n' +
      'event: text\ndata: {"text":" 🎉"}\n\n' +
      'event: content\ndata: {"content":"!"}\n\n' +
      'event: message.delta\ndata: {"delta":{"text":" a"}}\n\n' +
      'event: run.delta\ndata: {"delta":{"content":"b"}}\n\n' +
      'data: {"delta":"c"}\n\n' +
      'data: {"content":"d"}\n\n' +
      'event: status\ndata: {"status":"completed"}\n\n' +
      "event: done\ndata: {}\n\n",
    expected: [
      { type: "status", status: "queued" },
      { type: "status", status: "in_progress" },
      "Bonjour",
      "Bonjour, 世界",
      "Bonjour, 世界 🎉",
      "Bonjour, 世界 🎉!",
      "Bonjour, 世界 🎉! a",
      "Bonjour, 世界 🎉! ab",
      "Bonjour, 世界 🎉! abc",
      "Bonjour, 世界 🎉! abcd",
      { type: "status", status: "completed" },
      { type: "end", reason: "done" },
    ],
  },
  "snapshots and a final run": {
    stream:
      'data: {"snapshot":"Ça"}\n\n' +
      'data: {"snapshot":"Ça va"}\n\n' +
      'event: message\ndata: {"text":"Ça va bien"}\n\n' +
      'event: snapshot\ndata: {"text":"Ça va bien 😀"}\n\n' +
      'event: snapshot\ndata: {"text":"Ça va bien 😀"}\n\n' +
      `event: run.completed\ndata: ${run("completed", "Ça va bien 😀 merci")}\n\n`,
    expected: [
      "Ça",
      "Ça va",
      "Ça va bien",
      "Ça va bien 😀",
      "run:completed",
      "Ça va bien 😀 merci",
      { type: "status", status: "completed" },
      { type: "end", reason: "done" },
    ],
  },
  "run objects until the connection closes": {
    stream:
      `data: ${run("queued")}\n\n` +
      `event: run.updated\ndata: ${run("in_progress", "部分")}\n\n` +
      `data: ${run("in_progress", "部分的な答え")}\n\n` +
      `data: ${run("completed", "部分的な答え。")}\n\n`,
    expected: [
      "run:queued",
      { type: "status", status: "queued" },
      "run:in_progress",
      "部分",
      { type: "status", status: "in_progress" },
      "run:in_progress",
      "部分的な答え",
      "run:completed",
      "部分的な答え。",
      { type: "status", status: "completed" },
      { type: "end", reason: "eof" },
    ],
  },
  "plain text": {
    stream:
      "event: status\ndata: in_progress\n\n" +
      "data: Hello\n\n" +
      "data:  wide 🌍\ndata: second line\n\n" +
      "event: text\ndata: , more\n\n" +
      "event: message\ndata: !\n\n" +
      "event: delta\ndata: 42\n\n" +
      "event: end\ndata: bye\n\n",
    expected: [
      { type: "status", status: "in_progress" },
      "Hello",
      "Hello wide 🌍\nsecond line",
      "Hello wide 🌍\nsecond line, more",
      "Hello wide 🌍\nsecond line, more!",
      "Hello wide 🌍\nsecond line, more!42",
      { type: "end", reason: "done" },
    ],
  },
  "unknown events, comments and other fields ignored": {
    stream:
      ": connected\n\n" +
      "retry: 1000\nid: 7\n\n" +
      'event: reasoning\ndata: {"text":"thinking about it"}\n\n' +
      'event: reasoning.delta\ndata: {"delta":"hmm"}\n\n' +
      'event: tool_call\ndata: {"content":"ls -la"}\n\n' +
      'event: error\ndata: {"status":"failed"}\n\n' +
      "event: ping\ndata: not json at all\n\n" +
      "data: [1, 2]\n\n" +
      'data: {"unrelated":true}\n\n' +
      "foo: bar\n:\n" +
      'id: 8\ndata: {"text":"answer"}\n\n' +
      ": keep-alive\n\n" +
      'data: {"type":"done"}\n\n',
    expected: ["answer", { type: "end", reason: "done" }],
  },
  "the simulator's step events, interleaved with text": {
    stream:
      'event: status\ndata: {"status":"in_progress"}\n\n' +
      'event: step\ndata: {"id":"s1","title":"Searching the docs","status":"in_progress"}\n\n' +
      'event: delta\ndata: {"text":"Rate "}\n\n' +
      'event: step\ndata: {"id":"s1","title":"Searching the docs","status":"in_progress"}\n\n' +
      'event: step\ndata: {"id":"s1","status":"complete","details":"3 pages\\nfound"}\n\n' +
      'data: {"type":"step","id":"s2","title":"Reading <!channel> 📄","status":"pending"}\n\n' +
      'event: step\ndata: {"id":"s2","title":"Reading <!channel> 📄","status":"error"}\n\n' +
      'event: step\ndata: {"status":"complete"}\n\n' +
      'event: delta\ndata: {"text":"limits"}\n\n' +
      'event: done\ndata: {"status":"completed"}\n\n',
    expected: [
      { type: "status", status: "in_progress" },
      step("s1", "Searching the docs", "in_progress"),
      "Rate ",
      step("s1", "Searching the docs", "complete", "3 pages found"),
      step("s2", "Reading <!channel> 📄", "pending"),
      step("s2", "Reading <!channel> 📄", "error"),
      "Rate limits",
      { type: "status", status: "completed" },
      { type: "end", reason: "done" },
    ],
  },
  "tool calls in the shapes of common dialects": {
    stream:
      // Generic tool events: a call, its result by the call's id.
      'event: tool_call\ndata: {"id":"t1","name":"search_docs","status":"running","content":"q"}\n\n' +
      'event: tool_result\ndata: {"tool_call_id":"t1","content":"found it"}\n\n' +
      'event: tool_use\ndata: {"tool_use":{"id":"t2","name":"fetch"}}\n\n' +
      'event: tool_use.failed\ndata: {"tool_use_id":"t2"}\n\n' +
      // OpenAI Assistants run steps: tool calls are steps, message creation is not.
      'event: thread.run.step.created\ndata: {"id":"step_1","object":"thread.run.step","type":"tool_calls","status":"in_progress","step_details":{"type":"tool_calls","tool_calls":[{"id":"c","type":"file_search","file_search":{}}]}}\n\n' +
      'event: thread.run.step.delta\ndata: {"id":"step_1","object":"thread.run.step.delta","delta":{}}\n\n' +
      'event: thread.run.step.completed\ndata: {"id":"step_1","object":"thread.run.step","type":"tool_calls","status":"completed","step_details":{"type":"tool_calls","tool_calls":[{"id":"c","type":"function","function":{"name":"lookup"}}]}}\n\n' +
      'event: thread.run.step.created\ndata: {"id":"step_2","object":"thread.run.step","type":"message_creation","status":"in_progress","step_details":{"type":"message_creation"}}\n\n' +
      // OpenAI Responses output items: tool calls only.
      'event: response.output_item.added\ndata: {"type":"response.output_item.added","item":{"id":"ws_1","type":"web_search_call","status":"in_progress"}}\n\n' +
      'data: {"type":"response.output_item.done","item":{"id":"ws_1","type":"web_search_call","status":"completed"}}\n\n' +
      'data: {"type":"response.output_item.added","item":{"id":"msg_1","type":"message","status":"in_progress"}}\n\n' +
      // Anthropic tool_use blocks, ended by their index; text blocks are not steps.
      'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\""}}\n\n' +
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n' +
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
      // OpenAI chat chunks: tool calls by id and name, complete at the finish reason.
      'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"calc","arguments":""}}]}}]}\n\n' +
      'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}\n\n' +
      'data: {"choices":[{"delta":{"content":"42"}}]}\n\n' +
      'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n' +
      "data: [DONE]\n\n",
    expected: [
      step("t1", "search_docs", "in_progress"),
      step("t1", "search_docs", "complete"),
      step("t2", "fetch", "in_progress"),
      step("t2", "fetch", "error"),
      step("step_1", "file search", "in_progress"),
      step("step_1", "lookup", "complete"),
      step("ws_1", "web search", "in_progress"),
      step("ws_1", "web search", "complete"),
      step("toolu_1", "get_weather", "in_progress"),
      step("toolu_1", "get_weather", "complete"),
      step("call_9", "calc", "in_progress"),
      "42",
      step("call_9", "calc", "complete"),
      { type: "end", reason: "done" },
    ],
  },
  "assistant-style deltas with typed content parts": {
    stream:
      'event: thread.message.delta\ndata: {"delta":{"content":[{"index":0,"type":"text","text":{"value":"Hi"}}]}}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"no"}}\n\n' +
      'data: {"type":"content_block_delta","delta":{"type":"text_delta","text":" there"}}\n\n' +
      'data: {"type":"message","content":[{"type":"image","url":"x"},{"type":"text","text":"Hi there!"}]}\n\n' +
      "event: run.failed\ndata: {}\n\n",
    expected: [
      "Hi",
      "Hi there",
      "Hi there!",
      { type: "status", status: "failed" },
      { type: "end", reason: "done" },
    ],
  },
};

function expand(expected: (string | RunStreamUpdate)[]): unknown[] {
  return expected.map((e) => {
    if (typeof e !== "string") return e;
    if (e.startsWith("run:")) {
      return { type: "run", run: expect.objectContaining({ status: e.slice(4) }) };
    }
    return { type: "text", text: e };
  });
}

describe("readRunStream: dialects", () => {
  for (const [name, { stream, expected }] of Object.entries(DIALECTS)) {
    it(`reads ${name}`, async () => {
      expect(await collect([stream])).toEqual(expand(expected));
    });
  }

  it("gives identical updates however the bytes are split", async () => {
    for (const { stream } of Object.values(DIALECTS)) {
      const bytes = encoder.encode(`\uFEFF${stream}`);
      const whole = await collect([bytes]);
      expect(whole).toEqual(await collect([stream]));
      const bytewise = Array.from(bytes, (b) => Uint8Array.of(b));
      expect(await collect(bytewise)).toEqual(whole);
      for (let at = 0; at <= bytes.length; at++) {
        const split = await collect([bytes.slice(0, at), bytes.slice(at)]);
        if (JSON.stringify(split) !== JSON.stringify(whole)) {
          expect({ at, split }).toEqual({ at, split: whole });
        }
      }
    }
  });

  it.each([
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ])("reads %s line endings, also byte by byte", async (_name, newline) => {
    for (const { stream } of Object.values(DIALECTS)) {
      const converted = encoder.encode(stream.replaceAll("\n", newline));
      const expected = await collect([stream]);
      expect(await collect([converted])).toEqual(expected);
      expect(await collect(Array.from(converted, (b) => Uint8Array.of(b)))).toEqual(expected);
    }
  });

  it("does not duplicate text when an unnamed text grows as a snapshot", async () => {
    const updates = await collect([
      'data: {"text":"Hel"}\n\n',
      'data: {"text":"Hello"}\n\n',
      'data: {"text":"Hello"}\n\n',
      'data: {"text":" world"}\n\n',
      'data: {"text":"Hello world, again"}\n\n',
    ]);
    expect(texts(updates)).toEqual(["Hel", "Hello", "Hello world", "Hello world, again"]);
  });

  it("never treats an explicit increment as a snapshot", async () => {
    const updates = await collect([
      'event: delta\ndata: {"text":"ha"}\n\n',
      'event: delta\ndata: {"text":"ha"}\n\n',
      'data: {"delta":"haha"}\n\n',
    ]);
    expect(texts(updates)).toEqual(["ha", "haha", "hahahaha"]);
  });

  it("lets a snapshot shrink the text, and increments continue from it", async () => {
    const updates = await collect([
      'data: {"delta":"Hello wrld"}\n\n',
      'data: {"snapshot":"Hello"}\n\n',
      'data: {"delta":" world"}\n\n',
    ]);
    expect(texts(updates)).toEqual(["Hello wrld", "Hello", "Hello world"]);
  });

  it("bounds what a stream's steps can make it keep: 100 steps, one-line titles of 200", async () => {
    const many = Array.from(
      { length: 150 },
      (_, i) => `event: step\ndata: {"id":"s${i}","title":"step ${i}","status":"pending"}\n\n`,
    );
    const long = `event: step\ndata: {"id":"s0","title":"${"a\\n".repeat(300)}","status":"complete"}\n\n`;
    const steps = (await collect([...many, long])).flatMap((u) =>
      u.type === "step" ? [u.step] : [],
    );
    expect(steps).toHaveLength(101);
    expect(steps[99]?.id).toBe("s99");
    const title = steps[100]?.title ?? "";
    expect(steps[100]).toMatchObject({ id: "s0", status: "complete" });
    expect(title).toHaveLength(200);
    expect(title).toBe(`${"a ".repeat(100).slice(0, 199)}…`);
  });

  it("takes in the last event of a stream that ends on a lone CR", async () => {
    const updates = await collect(["data: last\r\r"]);
    expect(updates).toEqual([
      { type: "text", text: "last" },
      { type: "end", reason: "eof" },
    ]);
    // An event without its blank line is incomplete and not dispatched (SSE rule).
    expect(await collect(["data: cut\n"])).toEqual([{ type: "end", reason: "eof" }]);
  });
});

describe("readRunStream: limits and errors", () => {
  it("throws a ProtocolError for an oversized event, after what came before", async () => {
    const onClose = vi.fn();
    const big = "x".repeat(200);
    const stream = readRunStream(body([`data: ok\n\ndata: ${big}\n\ndata: more\n\n`]).body, {
      maxEventBytes: 100,
      request: { method: "GET", path: "/v1/run/r1/stream" },
      onClose,
    });
    const seen: RunStreamUpdate[] = [];
    const error = await (async () => {
      for await (const update of stream) seen.push(update);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ type: "text", text: "ok" }]);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).path).toBe("/v1/run/r1/stream");
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it("measures events in bytes and bounds an unterminated line", async () => {
    // 40 CJK characters are 120 bytes.
    await expect(collect([`data: ${"字".repeat(40)}\n\n`], { maxEventBytes: 100 })).rejects.toThrow(
      ProtocolError,
    );
    const endless = Array.from({ length: 20 }, () => "y".repeat(10));
    await expect(collect(["data: ", ...endless], { maxEventBytes: 100 })).rejects.toThrow(
      /exceeded 100 bytes/,
    );
    expect(await collect([`data: ${"y".repeat(90)}\n\n`], { maxEventBytes: 100 })).toHaveLength(2);
  });

  it("ends with eof after what was parsed when the connection breaks", async () => {
    const { body: broken } = body(
      ['data: {"delta":"partial"}\n\n', 'data: {"delta":"lost'],
      new Error("ECONNRESET"),
    );
    const updates: RunStreamUpdate[] = [];
    for await (const update of readRunStream(broken)) updates.push(update);
    expect(updates).toEqual([
      { type: "text", text: "partial" },
      { type: "end", reason: "eof" },
    ]);
  });
});

describe("readRunStream: closing", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const hanging = () => {
    const returned = vi.fn(async () => ({ done: true as const, value: undefined }));
    const iterable: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<Uint8Array>>(() => {}),
        return: returned,
      }),
    };
    return { iterable, returned };
  };

  it("ends with idle when no bytes come, and closes the request", async () => {
    vi.useFakeTimers();
    const { iterable, returned } = hanging();
    const onClose = vi.fn();
    const updates: RunStreamUpdate[] = [];
    const reading = (async () => {
      for await (const u of readRunStream(iterable, { idleTimeoutMs: 1_000, onClose })) {
        updates.push(u);
      }
    })();
    await vi.advanceTimersByTimeAsync(999);
    expect(updates).toEqual([]);
    expect(onClose).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await reading;
    expect(updates).toEqual([{ type: "end", reason: "idle" }]);
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(returned).toHaveBeenCalled();
  });

  it("counts keep-alives as life: the idle timer restarts on every chunk", async () => {
    vi.useFakeTimers();
    const onClose = vi.fn();
    async function* keepAlives() {
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 900));
        yield encoder.encode(": keep-alive\n\n");
      }
      yield encoder.encode('data: {"delta":"late"}\n\n');
      await new Promise(() => {});
    }
    const updates: RunStreamUpdate[] = [];
    const reading = (async () => {
      for await (const u of readRunStream(keepAlives(), { idleTimeoutMs: 1_000, onClose })) {
        updates.push(u);
      }
    })();
    await vi.advanceTimersByTimeAsync(4_500 + 999);
    expect(updates).toEqual([{ type: "text", text: "late" }]);
    await vi.advanceTimersByTimeAsync(1);
    await reading;
    expect(updates.at(-1)).toEqual({ type: "end", reason: "idle" });
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it("a consumer's break closes once and returns the body", async () => {
    const onClose = vi.fn();
    const { body: source, state } = body([
      'data: {"delta":"one"}\n\n',
      'data: {"delta":"two"}\n\n',
    ]);
    for await (const update of readRunStream(source, { onClose })) {
      expect(update).toEqual({ type: "text", text: "one" });
      break;
    }
    expect(onClose).toHaveBeenCalledTimes(1);
    await flush();
    expect(state.returned).toBe(true);
  });

  it("closes before handing out the end, and lets go of a body still open after done", async () => {
    const onClose = vi.fn();
    const { body: source, state } = body(["data: [DONE]\n\n", 'data: {"delta":"x"}\n\n']);
    const stream = readRunStream(source, { onClose });
    expect(await stream.next()).toEqual({ done: false, value: { type: "end", reason: "done" } });
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(onClose).toHaveBeenCalledTimes(1);
    await flush();
    expect(state.returned).toBe(true);
  });

  it("closes once even when returned before it was ever read", async () => {
    const onClose = vi.fn();
    const stream = readRunStream(body([]).body, { onClose });
    await stream.return(undefined);
    await stream.return(undefined);
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });
});

describe("readRunStream: over a real connection", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it("reads a fetch body and, on the consumer's break, lets onClose abort the request", async () => {
    let requestClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      requestClosed = resolve;
    });
    server = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(': hello\n\nevent: delta\ndata: {"text":"Grüß "}\n\n');
      res.write('event: delta\ndata: {"text":"dich 👋"}\n\n');
      req.on("close", requestClosed); // the stream stays open until the client aborts
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const controller = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/v1/run/r1/stream`, {
      signal: controller.signal,
    });
    if (!res.body) throw new Error("no body");
    const onClose = vi.fn(() => controller.abort());
    const seen: string[] = [];
    for await (const update of readRunStream(res.body, { onClose })) {
      if (update.type === "text") seen.push(update.text);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(["Grüß ", "Grüß dich 👋"]);
    expect(onClose).toHaveBeenCalledTimes(1);
    await closed;
  });
});
