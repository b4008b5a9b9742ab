import { afterEach, describe, expect, it } from "vitest";
import { ServiceBudget } from "../../src/budgets/service/budget.js";
import { ServiceClient, type ServiceClientOptions } from "../../src/service/client.js";
import { AuthenticationError, BadRequestError, NotFoundError } from "../../src/service/errors.js";
import type { RunStreamUpdate } from "../../src/service/run-stream.js";
import { runAnswer } from "../../src/service/schemas.js";
import type { SimulatorOptions } from "../../tools/simulator/options.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { ManualClock } from "../support/manual-clock.js";

/** Every method of the client against the simulator, over real HTTP on 127.0.0.1. */

const TOKEN = "sim-token";
let sim: RunningSimulator | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
  client = undefined;
  sim = undefined;
});

async function setUp(
  simOptions: SimulatorOptions = {},
  clientOptions: Partial<ServiceClientOptions> = {},
) {
  sim = await startSimulator({
    port: 0,
    token: TOKEN,
    queueDelayMs: 0,
    answer: { tokensPerSecond: Number.POSITIVE_INFINITY },
    ...simOptions,
  });
  client = new ServiceClient({ baseUrl: sim.url, token: TOKEN, ...clientOptions });
  return { sim, client, control: sim.control };
}

async function collect(stream: AsyncIterable<RunStreamUpdate>): Promise<RunStreamUpdate[]> {
  const out: RunStreamUpdate[] = [];
  for await (const update of stream) out.push(update);
  return out;
}

describe("threads and messages", () => {
  it("opens a thread, with and without a title", async () => {
    const { client, control } = await setUp();
    const titled = await client.openThread({ assistantId: "asst-1", title: "Hello" });
    const untitled = await client.openThread({ assistantId: "asst-1" });
    expect(titled).toMatchObject({ assistantId: "asst-1", title: "Hello" });
    expect(titled.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(control.requests.map((r) => [r.method, r.path, r.body, r.token])).toEqual([
      ["POST", "/v1/thread", { assistantId: "asst-1", title: "Hello" }, TOKEN],
      ["POST", "/v1/thread", { assistantId: "asst-1" }, TOKEN],
    ]);
    expect(untitled.id).not.toBe(titled.id);
  });

  it("posts a message", async () => {
    const { client, control } = await setUp();
    const thread = await client.openThread({ assistantId: "a" });
    const message = await client.postMessage(thread.id, { content: "What is SSE?" });
    expect(message).toMatchObject({ content: "What is SSE?", role: "user" });
    expect(control.messages(thread.id).map((m) => m.id)).toEqual([message.id]);
  });

  it("lists every message across pages of 400, oldest first", async () => {
    const { client, control } = await setUp();
    const thread = await client.openThread({ assistantId: "a" });
    for (let batch = 0; batch < 9; batch++) {
      const contents = Array.from({ length: 50 }, (_, i) => `m${batch * 50 + i}`);
      await Promise.all(contents.map((content) => client.postMessage(thread.id, { content })));
    }
    // The service's order is creation order, whatever order the concurrent posts arrived in.
    const posted = control.messages(thread.id).map((m) => m.id);
    expect(posted).toHaveLength(450);
    const listed = await client.listMessages(thread.id);
    expect(listed.map((m) => m.id)).toEqual(posted);
    const pages = control.requests.filter((r) => r.method === "GET");
    expect(pages.map((r) => r.query)).toEqual([
      { limit: "400" },
      { limit: "400", after: posted[399] },
    ]);
  });

  it("lists an empty thread with one request", async () => {
    const { client, control } = await setUp();
    const thread = await client.openThread({ assistantId: "a" });
    await expect(client.listMessages(thread.id)).resolves.toEqual([]);
    expect(control.requests.filter((r) => r.method === "GET")).toHaveLength(1);
  });

  it("lists threads, filtered by assistant", async () => {
    const { client, control } = await setUp();
    const a1 = await client.openThread({ assistantId: "A" });
    const b1 = await client.openThread({ assistantId: "B" });
    const a2 = await client.openThread({ assistantId: "A" });
    const onlyA = await client.listThreads({ assistantId: "A" });
    expect(onlyA.map((t) => t.id).sort()).toEqual([a1.id, a2.id].sort());
    const all = await client.listThreads();
    expect(all.map((t) => t.id).sort()).toEqual([a1.id, b1.id, a2.id].sort());
    const gets = control.requests.filter((r) => r.method === "GET");
    expect(gets.map((r) => [r.path, r.query])).toEqual([
      ["/v1/threads", { assistantId: "A", limit: "400" }],
      ["/v1/threads", { limit: "400" }],
    ]);
  });
});

describe("runs", () => {
  async function threadWithMessage() {
    const c = client as ServiceClient;
    const thread = await c.openThread({ assistantId: "a" });
    const message = await c.postMessage(thread.id, { content: "Explain backoff." });
    return { thread, message };
  }

  it("puts only the settings that are set at the top level of the run-start body", async () => {
    const { client, control } = await setUp();
    const { thread, message } = await threadWithMessage();
    await client.startRun(thread.id, {
      triggerMessageId: message.id,
      modelOverride: "max",
      reasoning_effort: "low",
      maxSteps: 7,
    });
    await client.startRun(thread.id, { triggerMessageId: message.id });
    const partial: Parameters<ServiceClient["startRun"]>[1] = { triggerMessageId: message.id };
    partial.reasoning_effort = "high";
    await client.startRun(thread.id, partial);
    const bodies = control.requests.filter((r) => r.path.endsWith("/runs")).map((r) => r.body);
    expect(bodies).toEqual([
      { triggerMessageId: message.id, modelOverride: "max", reasoning_effort: "low", maxSteps: 7 },
      { triggerMessageId: message.id },
      { triggerMessageId: message.id, reasoning_effort: "high" },
    ]);
  });

  it("builds a lazy run-start body once, when it is sent", async () => {
    const { client, control } = await setUp();
    const { thread, message } = await threadWithMessage();
    let builds = 0;
    await client.startRun(thread.id, () => {
      builds++;
      return { triggerMessageId: message.id, maxSteps: 3 };
    });
    expect(builds).toBe(1);
    const bodies = control.requests.filter((r) => r.path.endsWith("/runs")).map((r) => r.body);
    expect(bodies).toEqual([{ triggerMessageId: message.id, maxSteps: 3 }]);
  });

  it("starts a run, gets it, and reads the answer once it completed", async () => {
    const { client, control } = await setUp();
    control.enqueueAnswer({ chunks: ["Back", "off ", "is ", "waiting."] });
    const { thread, message } = await threadWithMessage();
    const run = await client.startRun(thread.id, {
      triggerMessageId: message.id,
      modelOverride: "flash",
    });
    expect(run).toMatchObject({ threadId: thread.id, status: "queued" });
    await control.waitForRunEnd(run.id);
    const done = await client.getRun(run.id);
    expect(done.status).toBe("completed");
    expect(runAnswer(done)).toBe("Backoff is waiting.");
    expect(done.modelUsed).toBe("assistant-flash");
  });

  it("streams a run's text until it ends", async () => {
    const { client, control } = await setUp({ answer: { tokensPerSecond: 1000 } });
    control.enqueueAnswer({ chunks: ["Hel", "lo ", "wor", "ld"] });
    const { thread, message } = await threadWithMessage();
    const run = await client.startRun(thread.id, { triggerMessageId: message.id });
    const updates = await collect(client.streamRun(run.id));
    const texts = updates.flatMap((u) => (u.type === "text" ? [u.text] : []));
    expect(texts.at(-1)).toBe("Hello world");
    expect(updates.at(-1)).toEqual({ type: "end", reason: "done" });
    const stream = control.requests.find((r) => r.path.endsWith("/stream"));
    expect(stream?.path).toBe(`/v1/run/${run.id}/stream`);
  });

  it.each(["openai", "snapshot", "run", "plain"] as const)(
    "streams the %s dialect to the same text",
    async (dialect) => {
      const { client, control } = await setUp({ dialect, answer: { tokensPerSecond: 1000 } });
      control.enqueueAnswer({ chunks: ["Line one\n", "line ", "two"] });
      const { thread, message } = await threadWithMessage();
      const run = await client.startRun(thread.id, { triggerMessageId: message.id });
      const updates = await collect(client.streamRun(run.id));
      const texts = updates.flatMap((u) => (u.type === "text" ? [u.text] : []));
      expect(texts.at(-1)).toBe("Line one\nline two");
    },
  );

  it("stops a hanging run with POST /v1/runs/{id}/stop and body {}", async () => {
    const { client, control } = await setUp();
    control.enqueueAnswer({ chunks: ["partial "], hang: true });
    const { thread, message } = await threadWithMessage();
    const run = await client.startRun(thread.id, { triggerMessageId: message.id });
    const stopped = await client.stopRun(run.id);
    expect(stopped?.status).toBe("canceled");
    const stop = control.requests.find((r) => r.path.endsWith("/stop"));
    expect(stop).toMatchObject({ method: "POST", path: `/v1/runs/${run.id}/stop`, body: {} });
    expect((await client.getRun(run.id)).status).toBe("canceled");
  });

  it("reports a failed run's error", async () => {
    const { client, control } = await setUp();
    control.enqueueAnswer({ fail: "the tool broke" });
    const { thread, message } = await threadWithMessage();
    const run = await client.startRun(thread.id, { triggerMessageId: message.id });
    await control.waitForRunEnd(run.id);
    expect(await client.getRun(run.id)).toMatchObject({
      status: "failed",
      error: "the tool broke",
    });
  });
});

describe("error mapping against the simulator", () => {
  it("a wrong token is an AuthenticationError (401)", async () => {
    const { sim } = await setUp();
    const stranger = new ServiceClient({ baseUrl: sim.url, token: "wrong" });
    try {
      const error = await stranger.openThread({ assistantId: "a" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthenticationError);
      expect((error as AuthenticationError).status).toBe(401);
      expect((error as Error).message).not.toContain("wrong");
    } finally {
      await stranger.close();
    }
  });

  it("an unknown run is a NotFoundError (404), not retried", async () => {
    const { client, control } = await setUp();
    await expect(client.getRun("00000000-0000-4000-8000-000000000000")).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(control.requests).toHaveLength(1);
  });

  it("a trigger message of another thread is a BadRequestError (400) with the service's message", async () => {
    const { client } = await setUp();
    const thread = await client.openThread({ assistantId: "a" });
    const error = await client
      .startRun(thread.id, { triggerMessageId: "00000000-0000-4000-8000-000000000000" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).status).toBe(400);
    expect((error as Error).message).toMatch(/triggerMessageId/);
  });

  it("a POST answered 500 is sent once; a GET answered 500 is retried", async () => {
    const { client, control } = await setUp(
      {},
      { clock: new ManualClock(Date.now(), { sleepsAdvance: true }) },
    );
    const thread = await client.openThread({ assistantId: "a" });
    control.failRequests({ count: 1, status: 500, method: "POST" });
    await expect(client.postMessage(thread.id, { content: "x" })).rejects.toThrow(/HTTP 500/);
    control.failRequests({ count: 2, status: 503, method: "GET" });
    await expect(client.listMessages(thread.id)).resolves.toEqual([]);
    expect(control.requests.map((r) => [r.method, r.status])).toEqual([
      ["POST", 201],
      ["POST", 500],
      ["GET", 503],
      ["GET", 503],
      ["GET", 200],
    ]);
  });

  it("a reset POST is not sent again", async () => {
    const { client, control } = await setUp(
      {},
      { clock: new ManualClock(Date.now(), { sleepsAdvance: true }) },
    );
    const thread = await client.openThread({ assistantId: "a" });
    control.failRequests({ count: 1, status: "reset", pathPattern: /messages$/ });
    await expect(client.postMessage(thread.id, { content: "x" })).rejects.toMatchObject({
      kind: "connection",
      sent: true,
    });
    expect(control.counts().messages).toBe(0);
    expect(control.requests.filter((r) => r.path.endsWith("/messages"))).toHaveLength(1);
  });

  it("a run start refused with 429 waits Retry-After and is sent again", async () => {
    // One clock for the client and its budget, which jumps over every wait.
    const clock = new ManualClock(Date.now(), { sleepsAdvance: true });
    const { client, control } = await setUp({}, { clock, budget: new ServiceBudget({ clock }) });
    const thread = await client.openThread({ assistantId: "a" });
    const message = await client.postMessage(thread.id, { content: "x" });
    control.rateLimitNextRunStart(2);
    const run = await client.startRun(thread.id, { triggerMessageId: message.id });
    expect(run.status).toBe("queued");
    expect(clock.sleeps).toEqual([2000]);
    const starts = control.requests.filter((r) => r.path.endsWith("/runs"));
    expect(starts.map((r) => r.status)).toEqual([429, 201]);
    expect(control.counts().runs).toBe(1);
  });
});

describe("chat completions against the simulator", () => {
  it("a non-streamed completion gives the ids of a run that can be followed", async () => {
    const { client, control } = await setUp();
    control.enqueueAnswer({ chunks: ["Queued ", "answer."] });
    const queued = await client.createChatCompletion({
      assistantId: "asst",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(control.getRun(queued.runId)?.threadId).toBe(queued.threadId);
    await control.waitForRunEnd(queued.runId);
    const run = await client.getRun(queued.runId);
    expect(runAnswer(run)).toBe("Queued answer.");
    const messages = await client.listMessages(queued.threadId);
    expect(messages[0]).toMatchObject({ id: queued.messageId, content: "Hi" });
  });

  it("a streamed completion assembles the answer", async () => {
    const { client, control } = await setUp({ answer: { tokensPerSecond: 1000 } });
    control.enqueueAnswer({ chunks: ["Stre", "amed ", "text 🎉"] });
    let text = "";
    for await (const chunk of client.streamChatCompletion({
      assistantId: "asst",
      messages: [{ role: "user", content: "Hi" }],
    })) {
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    expect(text).toBe("Streamed text 🎉");
  });

  it("refusals send nothing", async () => {
    const { client, control } = await setUp();
    await expect(
      client.createChatCompletion({ assistantId: "a", messages: [{ role: "tool", content: "x" }] }),
    ).rejects.toBeInstanceOf(BadRequestError);
    await expect(
      client.createChatCompletion({
        assistantId: "a",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "u" } }] }],
      }),
    ).rejects.toBeInstanceOf(BadRequestError);
    expect(control.requests).toHaveLength(0);
  });
});
