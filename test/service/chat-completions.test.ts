import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ChatCompletionChunk,
  type ChatCompletionRequest,
  createChatCompletion,
  streamChatCompletion,
} from "../../src/service/chat-completions.js";
import {
  BadRequestError,
  ConnectionError,
  ProtocolError,
  ServerError,
} from "../../src/service/errors.js";
import { ServiceHttp } from "../../src/service/http/http.js";
import { ManualClock } from "../support/manual-clock.js";
import { RecordingBudget } from "./fake-budget.js";
import { type LocalHandler, type LocalServer, sendJson, startLocalServer } from "./local-server.js";

let server: LocalServer | undefined;
let http: ServiceHttp | undefined;
afterEach(async () => {
  await http?.close();
  await server?.close();
  http = undefined;
  server = undefined;
});

async function setUp(handler: LocalHandler) {
  server = await startLocalServer(handler);
  const budget = new RecordingBudget();
  http = new ServiceHttp({
    baseUrl: server.url,
    token: "t",
    budget,
    clock: new ManualClock(undefined, { sleepsAdvance: true }),
  });
  return { server, http, budget };
}

const ASK: ChatCompletionRequest = {
  assistantId: "asst",
  messages: [{ role: "user", content: "Hello?" }],
};

function chunk(content: string | undefined, extra: Record<string, unknown> = {}): string {
  const delta = content === undefined ? {} : { content };
  return `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta }], ...extra })}\n\n`;
}

/** Writes the SSE text in pieces of `size` bytes (splitting lines and multibyte chars). */
function sse(text: string, size = 7): LocalHandler {
  return (_req, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += size) res.write(bytes.subarray(i, i + size));
    res.end();
  };
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

describe("refusals before sending (interface §4 rules 1-2)", () => {
  it.each([
    ["a tool message", { assistantId: "a", messages: [{ role: "tool", content: "x" }] }],
    [
      "an image part",
      {
        assistantId: "a",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }],
      },
    ],
    ["a null content", { assistantId: "a", messages: [{ role: "user", content: null }] }],
    ["no messages", { assistantId: "a", messages: [] }],
  ])("refuses %s with BadRequestError and sends nothing", async (_name, body) => {
    const { server, budget } = await setUp((_req, res) => sendJson(res, 200, {}));
    const request = body as ChatCompletionRequest;
    await expect(createChatCompletion(http as ServiceHttp, request)).rejects.toBeInstanceOf(
      BadRequestError,
    );
    await expect(
      collect(streamChatCompletion(http as ServiceHttp, request, { idleTimeoutMs: 1000 })),
    ).rejects.toBeInstanceOf(BadRequestError);
    expect(server.received).toHaveLength(0);
    expect(budget.takes).toHaveLength(0);
  });
});

describe("non-streamed chat completion", () => {
  it("sends stream:false as a run start and reads snake_case ids", async () => {
    const { server, budget } = await setUp((_req, res) =>
      sendJson(res, 200, {
        object: "chat.completion",
        choices: [
          { index: 0, message: { role: "assistant", content: "" }, finish_reason: "queued" },
        ],
        thread_id: "t1",
        message_id: "m1",
        run_id: "r1",
      }),
    );
    const queued = await createChatCompletion(http as ServiceHttp, { ...ASK, model: "x" });
    expect(queued).toMatchObject({ threadId: "t1", messageId: "m1", runId: "r1" });
    expect(queued.raw.object).toBe("chat.completion");
    expect(server.received[0]?.url).toBe("/v1/agents/chat/completions");
    expect(JSON.parse(server.received[0]?.body ?? "")).toEqual({
      ...ASK,
      model: "x",
      stream: false,
    });
    expect(budget.takes[0]?.kind).toBe("run_start");
  });

  it("reads camelCase ids and ids under metadata", async () => {
    await setUp((_req, res) =>
      sendJson(res, 200, { threadId: "t2", metadata: { messageId: "m2", run_id: "r2" } }),
    );
    await expect(createChatCompletion(http as ServiceHttp, ASK)).resolves.toMatchObject({
      threadId: "t2",
      messageId: "m2",
      runId: "r2",
    });
  });

  it("a response without the ids is a ProtocolError", async () => {
    await setUp((_req, res) => sendJson(res, 200, { thread_id: "t1" }));
    await expect(createChatCompletion(http as ServiceHttp, ASK)).rejects.toBeInstanceOf(
      ProtocolError,
    );
  });

  it("is not retried after a 500 (it starts a run)", async () => {
    const { server } = await setUp((_req, res) => sendJson(res, 500, {}));
    await expect(createChatCompletion(http as ServiceHttp, ASK)).rejects.toBeInstanceOf(
      ServerError,
    );
    expect(server.received).toHaveLength(1);
  });
});

describe("streamed chat completion", () => {
  it("yields every chunk, tolerates a missing delta.content, and ends at [DONE]", async () => {
    const text = [
      ": keep-alive\n\n",
      chunk("Héllo ", { choices: [{ index: 0, delta: { role: "assistant", content: "Héllo " } }] }),
      chunk(undefined),
      chunk("wörld 🌍"),
      chunk(undefined, { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
      "data: [DONE]\n\n",
      chunk("after done is ignored"),
    ].join("");
    const { server } = await setUp(sse(text, 5));
    const chunks = await collect(
      streamChatCompletion(http as ServiceHttp, ASK, { idleTimeoutMs: 1000 }),
    );
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("Héllo wörld 🌍");
    expect(chunks).toHaveLength(4);
    expect(chunks[3]?.choices[0]?.finish_reason).toBe("stop");
    expect(server.received[0]?.headers.accept).toBe("text/event-stream");
    expect(JSON.parse(server.received[0]?.body ?? "").stream).toBe(true);
  });

  it("parses CRLF line endings", async () => {
    await setUp(sse(`${chunk("a")}${chunk("b")}data: [DONE]\n\n`.replaceAll("\n", "\r\n"), 3));
    const chunks = await collect(
      streamChatCompletion(http as ServiceHttp, ASK, { idleTimeoutMs: 1000 }),
    );
    expect(chunks.map((c) => c.choices[0]?.delta?.content).join("")).toBe("ab");
  });

  it("a stream that ends without [DONE] is a ProtocolError", async () => {
    await setUp(sse(chunk("partial")));
    const seen: ChatCompletionChunk[] = [];
    const error = await (async () => {
      for await (const c of streamChatCompletion(http as ServiceHttp, ASK, {
        idleTimeoutMs: 1000,
      })) {
        seen.push(c);
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(seen).toHaveLength(1);
  });

  it("a chunk that is not JSON, or an error chunk, is a ProtocolError", async () => {
    await setUp(sse("data: {not json\n\n"));
    await expect(
      collect(streamChatCompletion(http as ServiceHttp, ASK, { idleTimeoutMs: 1000 })),
    ).rejects.toBeInstanceOf(ProtocolError);
    await server?.close();
    await http?.close();
    await setUp(sse(`data: ${JSON.stringify({ error: { message: "model overloaded" } })}\n\n`));
    await expect(
      collect(streamChatCompletion(http as ServiceHttp, ASK, { idleTimeoutMs: 1000 })),
    ).rejects.toThrow(/model overloaded/);
  });

  it("a connection reset mid-stream is a ConnectionError", async () => {
    await setUp((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("a"), () => setImmediate(() => res.socket?.destroy()));
    });
    await expect(
      collect(streamChatCompletion(http as ServiceHttp, ASK, { idleTimeoutMs: 1000 })),
    ).rejects.toBeInstanceOf(ConnectionError);
  });

  it("a consumer break closes the connection", async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    await setUp((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("first"));
      res.on("close", () => closed());
    });
    for await (const c of streamChatCompletion(http as ServiceHttp, ASK, { idleTimeoutMs: 1000 })) {
      expect(c.choices[0]?.delta?.content).toBe("first");
      break;
    }
    await connectionClosed;
  });
});
