import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type RunningSimulator,
  type SimulatorRun,
  startSimulator,
} from "../../../tools/simulator/server.js";
import { type ErrorBody, jsonData, readSse, ServiceFetch, UUID_V4 } from "./service-fetch.js";

const PATH = "/v1/agents/chat/completions";
let sim: RunningSimulator;
let api: ServiceFetch;

beforeEach(async () => {
  sim = await startSimulator({
    queueDelayMs: 0,
    answer: { tokensPerSecond: Infinity },
    now: () => 1_700_000_000_500,
  });
  api = new ServiceFetch(sim.url);
});
afterEach(async () => {
  await sim.close();
});

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    delta: { role?: string; content?: string };
    finish_reason: string | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

interface Completion {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: { index: number; message: { role: string; content: string }; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  thread_id: string;
  message_id: string;
  run_id: string;
}

const user = (content: string) => ({ role: "user", content });

describe("§4 POST /v1/agents/chat/completions, stream true (§6 chunk lines)", () => {
  it("streams chat.completion.chunk events, role first, then [DONE]; completion_tokens 0", async () => {
    sim.control.enqueueAnswer({ chunks: ["Hello", ", ", "world"] });
    const response = await api.fetch("POST", PATH, {
      assistantId: "asst-1",
      stream: true,
      messages: [{ role: "system", content: "be brief" }, user("Say hello")],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/u);
    const read = await readSse(response);
    expect(read.events.at(-1)).toEqual({ event: undefined, data: "[DONE]" });
    for (const event of read.events) expect(event.event).toBeUndefined();
    const chunks = jsonData<Chunk>(read);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: "assistant-standard",
      });
      expect(chunk.id).toMatch(/^chatcmpl-/u);
      expect(chunk.id).toBe(chunks[0]?.id);
    }
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello, world");
    const last = chunks.at(-1);
    expect(last?.choices[0]?.finish_reason).toBe("stop");
    // "be brief" + "Say hello" = 17 characters ≈ 5 tokens.
    expect(last?.usage).toEqual({ prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
  });

  it("posts the last user message into a new thread and starts a run on it", async () => {
    sim.control.enqueueAnswer({ text: "Fine." });
    const response = await api.fetch("POST", PATH, {
      assistantId: "asst-7",
      stream: true,
      messages: [user("first"), { role: "assistant", content: "ok" }, user("second")],
    });
    await readSse(response);
    const [thread] = sim.control.threads();
    expect(thread?.assistantId).toBe("asst-7");
    const messages = sim.control.messages(thread?.id ?? "");
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "second"],
      ["assistant", "Fine."],
    ]);
    expect(sim.control.runs()[0]).toMatchObject({
      status: "completed",
      triggerMessageId: messages[0]?.id,
    });
  });

  it("ends with finish_reason error on a failed run", async () => {
    sim.control.enqueueAnswer({ fail: "tool failed" });
    const response = await api.fetch("POST", PATH, {
      assistantId: "a",
      stream: true,
      messages: [user("q")],
    });
    const chunks = jsonData<Chunk>(await readSse(response));
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("error");
  });

  it("echoes the requested model in the chunks and as the run's modelUsed", async () => {
    const response = await api.fetch("POST", PATH, {
      assistantId: "a",
      stream: true,
      model: "assistant-max",
      messages: [user("q")],
    });
    const chunks = jsonData<Chunk>(await readSse(response));
    expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(["assistant-max"]));
    expect(sim.control.runs()[0]?.modelUsed).toBe("assistant-max");
  });
});

describe("§4 POST /v1/agents/chat/completions, stream not true", () => {
  it("answers at once with no text, finish_reason queued and the three ids", async () => {
    sim.control.enqueueAnswer({ chunks: ["Later ", "text."] });
    const { status, body } = await api.call<Completion>("POST", PATH, {
      assistantId: "asst-1",
      messages: [user("When?")],
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: "chat.completion",
      created: 1_700_000_000,
      choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "queued" }],
      usage: { prompt_tokens: 2, completion_tokens: 0, total_tokens: 2 },
    });
    expect(body.thread_id).toMatch(UUID_V4);
    expect(body.message_id).toMatch(UUID_V4);
    expect(body.run_id).toMatch(UUID_V4);
    expect(sim.control.messages(body.thread_id)[0]?.id).toBe(body.message_id);
    await sim.control.waitForRunEnd(body.run_id);
    const run = await api.call<SimulatorRun>("GET", `/v1/run/${body.run_id}`);
    expect(run.body).toMatchObject({
      threadId: body.thread_id,
      triggerMessageId: body.message_id,
      status: "completed",
      output: [{ type: "text", text: "Later text." }],
    });
  });

  it("continues the same conversation with threadId", async () => {
    const first = await api.call<Completion>("POST", PATH, {
      assistantId: "a",
      messages: [user("one")],
    });
    await sim.control.waitForRunEnd(first.body.run_id);
    const second = await api.call<Completion>("POST", PATH, {
      threadId: first.body.thread_id,
      messages: [user("two")],
    });
    expect(second.status).toBe(200);
    expect(second.body.thread_id).toBe(first.body.thread_id);
    await sim.control.waitForRunEnd(second.body.run_id);
    const roles = sim.control
      .messages(first.body.thread_id)
      .map((m) => `${m.role}:${m.content.slice(0, 3)}`);
    expect(roles.filter((r) => r.startsWith("user"))).toEqual(["user:one", "user:two"]);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 2, runs: 2 });
  });
});

describe("§4 chat completions rules 1–2 and §7 rule 3: refusals", () => {
  it.each([
    [
      "a tool message (rule 1)",
      { assistantId: "a", messages: [user("q"), { role: "tool", content: "r" }] },
      /tool/u,
    ],
    [
      "an image part (rule 2)",
      {
        assistantId: "a",
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] },
        ],
      },
      /image/u,
    ],
    [
      "content as an object",
      { assistantId: "a", messages: [{ role: "user", content: { text: "q" } }] },
      /content/u,
    ],
    ["content null", { assistantId: "a", messages: [{ role: "user", content: null }] }, /content/u],
    ["no messages", { assistantId: "a" }, /messages/u],
    ["empty messages", { assistantId: "a", messages: [] }, /messages/u],
    ["neither assistantId nor threadId", { messages: [user("q")] }, /assistantId or threadId/u],
    ["stream not a boolean", { assistantId: "a", stream: "yes", messages: [user("q")] }, /stream/u],
    [
      "no user message",
      { assistantId: "a", messages: [{ role: "system", content: "s" }] },
      /user/u,
    ],
  ])("refuses %s with 400 and starts nothing", async (_name, body, message) => {
    const answer = await api.call<ErrorBody>("POST", PATH, body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.type).toBe("invalid_request");
    expect(answer.body.error.message).toMatch(message);
    expect(sim.control.counts()).toEqual({ threads: 0, messages: 0, runs: 0 });
  });

  it("answers 404 for an unknown threadId", async () => {
    const answer = await api.call<ErrorBody>("POST", PATH, {
      threadId: crypto.randomUUID(),
      messages: [user("q")],
    });
    expect(answer.status).toBe(404);
    expect(answer.body.error.type).toBe("not_found");
  });
});
