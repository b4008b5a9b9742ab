import { performance } from "node:perf_hooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type RecordedRequest,
  type RunningSimulator,
  type RunTextPiece,
  type SimulatorRun,
  startSimulator,
} from "../../../tools/simulator/server.js";
import { type ErrorBody, readSse, ServiceFetch, TOKEN } from "./service-fetch.js";

let sim: RunningSimulator;
let api: ServiceFetch;
const NOW = 1_700_000_000_000;

beforeEach(async () => {
  sim = await startSimulator({
    queueDelayMs: 0,
    answer: { tokensPerSecond: Infinity },
    now: () => NOW,
  });
  api = new ServiceFetch(sim.url);
});
afterEach(async () => {
  await sim.close();
});

async function runText(run: SimulatorRun) {
  return (await sim.control.waitForRunEnd(run.id)).output?.[0]?.text;
}

async function waitForText(runId: string, text: string) {
  const response = await api.fetch("GET", `/v1/run/${runId}/stream?dialect=snapshot`);
  await readSse(response, (read) => read.events.some((e) => e.data.includes(text)));
}

describe("control: recorded requests and events", () => {
  it("records every request with method, path, query, body, token, status and time", async () => {
    const seen: RecordedRequest[] = [];
    sim.control.events.on("request", (r) => seen.push(r));
    const thread = await api.createThread("asst-1");
    await api.call("GET", "/v1/threads?assistantId=asst-1&limit=5&limit=6");
    await api.call("POST", "/v1/thread", undefined, { rawBody: "oops", token: null });
    expect(sim.control.requests).toEqual([
      {
        method: "POST",
        path: "/v1/thread",
        query: {},
        body: { assistantId: "asst-1" },
        token: TOKEN,
        status: 201,
        at: NOW,
      },
      {
        method: "GET",
        path: "/v1/threads",
        query: { assistantId: "asst-1", limit: "5" },
        body: undefined,
        token: TOKEN,
        status: 200,
        at: NOW,
      },
      {
        method: "POST",
        path: "/v1/thread",
        query: {},
        body: "oops",
        token: undefined,
        status: 401,
        at: NOW,
      },
    ]);
    expect(seen).toEqual(sim.control.requests);
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 0, runs: 0 });
    expect(sim.control.threads()[0]?.id).toBe(thread.id);
  });
});

describe("control: scripted answers", () => {
  it("uses enqueued answers FIFO, then the default, then the generator", async () => {
    sim.control.enqueueAnswer({ text: "first" });
    sim.control.enqueueAnswer({ chunks: ["sec", "ond"] });
    sim.control.setDefaultAnswer({ text: "default" });
    const texts: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) texts.push(await runText((await api.ask("q")).run));
    sim.control.setDefaultAnswer(undefined);
    texts.push(await runText((await api.ask("q")).run));
    expect(texts.slice(0, 4)).toEqual(["first", "second", "default", "default"]);
    expect(texts[4]).toMatch(/^## /u);
  });

  it("stamps each piece of an answer as it is written, by the simulator's clock", async () => {
    const pieces: RunTextPiece[] = [];
    sim.control.events.on("run-text", (piece) => pieces.push(piece));
    sim.control.enqueueAnswer({ chunks: ["## ", "Plan", " now"] });
    const { run } = await api.ask("q");
    expect(await runText(run)).toBe("## Plan now");
    expect(pieces).toEqual([
      { runId: run.id, text: "## ", written: 3, at: NOW },
      { runId: run.id, text: "Plan", written: 7, at: NOW },
      { runId: run.id, text: " now", written: 11, at: NOW },
    ]);
  });

  it("waitForRunEnd rejects for an unknown run", async () => {
    await expect(sim.control.waitForRunEnd("nope")).rejects.toThrow(/unknown run/u);
  });
});

describe("control: faults", () => {
  it("setLatency delays every response by at least that long", async () => {
    sim.control.setLatency(60);
    const started = performance.now();
    expect((await api.call("GET", "/v1/threads")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });

  it("failRequests answers the next matching requests with the status and a JSON error", async () => {
    sim.control.failRequests({ count: 2, status: 503, method: "get", pathPattern: /threads$/u });
    const first = await api.call<ErrorBody>("GET", "/v1/threads");
    expect(first.status).toBe(503);
    expect(first.body.error.type).toBe("server_error");
    expect((await api.call("POST", "/v1/thread", { assistantId: "a" })).status).toBe(201);
    expect((await api.call("GET", "/v1/threads")).status).toBe(503);
    expect((await api.call("GET", "/v1/threads")).status).toBe(200);
  });

  it("failRequests defaults to 500 for any request", async () => {
    sim.control.failRequests({ count: 1 });
    expect((await api.call("POST", "/v1/thread", { assistantId: "a" })).status).toBe(500);
    expect(sim.control.counts().threads).toBe(0);
  });

  it('failRequests with status "reset" destroys the connection without an answer', async () => {
    sim.control.failRequests({ count: 1, status: "reset", pathPattern: /^\/v1\/thread$/u });
    await expect(api.call("POST", "/v1/thread", { assistantId: "a" })).rejects.toThrow();
    expect(sim.control.counts().threads).toBe(0);
    expect(sim.control.requests.map((r) => [r.path, r.status])).toEqual([["/v1/thread", 0]]);
    expect((await api.call("POST", "/v1/thread", { assistantId: "a" })).status).toBe(201);
  });

  it('failRequests with status "reset-after" carries the request out, then resets the connection', async () => {
    const thread = await api.createThread();
    const message = await api.postMessage(thread.id, "q");
    const path = `/v1/thread/${thread.id}/runs`;
    sim.control.failRequests({ count: 1, status: "reset-after", pathPattern: /\/runs$/u });
    await expect(api.call("POST", path, { triggerMessageId: message.id })).rejects.toThrow();
    // The run exists though its answer never came.
    expect(sim.control.runs().map((r) => r.triggerMessageId)).toEqual([message.id]);
    expect(sim.control.requests.at(-1)).toMatchObject({ path, status: 0 });
    expect((await api.call("POST", path, { triggerMessageId: message.id })).status).toBe(201);
    expect(sim.control.counts().runs).toBe(2);
  });

  it("rateLimitNextRunStart answers one run start with 429 and that Retry-After", async () => {
    const thread = await api.createThread();
    const message = await api.postMessage(thread.id, "q");
    sim.control.rateLimitNextRunStart(7);
    const path = `/v1/thread/${thread.id}/runs`;
    const refused = await api.call<ErrorBody>("POST", path, { triggerMessageId: message.id });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("7");
    expect(refused.body.error.type).toBe("rate_limited");
    expect((await api.call("POST", path, { triggerMessageId: message.id })).status).toBe(201);
  });

  it("dropStreamsAfter(k) cuts run streams opened from now after k events, without an end", async () => {
    sim.control.enqueueAnswer({ chunks: ["a", "b", "c", "d"] });
    const { run } = await api.ask("q");
    await sim.control.waitForRunEnd(run.id);
    sim.control.dropStreamsAfter(1);
    const cut = await readSse(await api.fetch("GET", `/v1/run/${run.id}/stream`));
    expect(cut.ended).toBe("error");
    expect(cut.events).toEqual([{ event: "delta", data: '{"text":"abcd"}' }]);
    sim.control.dropStreamsAfter(undefined);
    const whole = await readSse(await api.fetch("GET", `/v1/run/${run.id}/stream`));
    expect(whole.ended).toBe("eof");
    expect(whole.events.at(-1)?.event).toBe("done");
  });

  it("dropStreamsAfter(k) also cuts streamed chat completions", async () => {
    sim.control.enqueueAnswer({ chunks: ["a", "b", "c", "d"] });
    sim.control.dropStreamsAfter(3);
    const response = await api.fetch("POST", "/v1/agents/chat/completions", {
      assistantId: "a",
      stream: true,
      messages: [{ role: "user", content: "q" }],
    });
    const read = await readSse(response);
    expect(read.ended).toBe("error");
    expect(read.events).toHaveLength(3);
    expect(read.events.some((e) => e.data === "[DONE]")).toBe(false);
  });

  it("hangRuns(true) keeps new runs in_progress until stopped", async () => {
    sim.control.hangRuns(true);
    sim.control.enqueueAnswer({ text: "all of it" });
    const { run } = await api.ask("q");
    await waitForText(run.id, "all of it");
    expect(sim.control.getRun(run.id)?.status).toBe("in_progress");
    const stopped = await api.call<SimulatorRun>("POST", `/v1/runs/${run.id}/stop`);
    expect(stopped.body).toMatchObject({
      status: "canceled",
      output: [{ type: "text", text: "all of it" }],
    });
    expect((await sim.control.waitForRunEnd(run.id)).status).toBe("canceled");
  });

  it("resetFaults clears every fault", async () => {
    sim.control.setLatency(10_000);
    sim.control.failRequests({ count: 5 });
    sim.control.rateLimitNextRunStart(3);
    sim.control.dropStreamsAfter(0);
    sim.control.hangRuns(true);
    sim.control.resetFaults();
    sim.control.enqueueAnswer({ text: "fine" });
    const { run } = await api.ask("q");
    expect(await runText(run)).toBe("fine");
    const read = await readSse(await api.fetch("GET", `/v1/run/${run.id}/stream`));
    expect(read.ended).toBe("eof");
  });
});

describe("close()", () => {
  it("ends open streams, rejects pending waiters and can be called twice", async () => {
    sim.control.hangRuns(true);
    const { run } = await api.ask("q");
    const response = await api.fetch("GET", `/v1/run/${run.id}/stream`);
    const reading = readSse(response);
    const waiting = sim.control.waitForRunEnd(run.id);
    await sim.close();
    await sim.close();
    await expect(waiting).rejects.toThrow(/closed/u);
    expect((await reading).ended).toBe("error");
  });
});
