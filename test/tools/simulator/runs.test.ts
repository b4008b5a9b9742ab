import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SimulatorOptions } from "../../../tools/simulator/options.js";
import {
  type RunningSimulator,
  type SimulatorRun,
  startSimulator,
} from "../../../tools/simulator/server.js";
import { type ErrorBody, readSse, ServiceFetch, UUID_V4 } from "./service-fetch.js";

let sim: RunningSimulator;
let api: ServiceFetch;

async function start(options: SimulatorOptions = {}) {
  await sim?.close();
  sim = await startSimulator({
    queueDelayMs: 0,
    answer: { tokensPerSecond: Infinity },
    ...options,
  });
  api = new ServiceFetch(sim.url);
}

beforeEach(() => start());
afterEach(async () => {
  await sim.close();
});

/** Resolves once the run has written `text` (seen on its stream), without polling. */
async function waitForText(runId: string, text: string) {
  const response = await api.fetch("GET", `/v1/run/${runId}/stream?dialect=snapshot`);
  await readSse(response, (read) => read.events.some((e) => e.data.includes(text)));
}

/** Resolves once the run is in_progress (event-based). */
function inProgress(runId: string): Promise<void> {
  return new Promise((resolve) => {
    if (sim.control.getRun(runId)?.status === "in_progress") {
      resolve();
      return;
    }
    const listener = (run: SimulatorRun) => {
      if (run.id !== runId || run.status !== "in_progress") return;
      sim.control.events.off("run-status", listener);
      resolve();
    };
    sim.control.events.on("run-status", listener);
  });
}

describe("§4 POST /v1/thread/{id}/runs", () => {
  it("starts a run on a message: 201, UUID id, status queued, the §2 fields", async () => {
    const thread = await api.createThread("asst-9");
    const message = await api.postMessage(thread.id, "What is backoff?");
    const { status, body } = await api.call<SimulatorRun>("POST", `/v1/thread/${thread.id}/runs`, {
      triggerMessageId: message.id,
    });
    expect(status).toBe(201);
    expect(body.id).toMatch(UUID_V4);
    expect(body).toMatchObject({
      threadId: thread.id,
      assistantId: "asst-9",
      status: "queued",
      output: null,
      modelUsed: null,
      error: null,
      triggerMessageId: message.id,
      settings: {},
    });
  });

  it("takes the §2 run settings as top-level fields of the body", async () => {
    const { run } = await api.ask("q", {
      modelOverride: "max",
      reasoning_effort: "low",
      maxSteps: 7,
    });
    expect(run.settings).toEqual({ modelOverride: "max", reasoning_effort: "low", maxSteps: 7 });
  });

  it.each([
    ["modelOverride not flash|max", { modelOverride: "turbo" }, /modelOverride/u],
    ["modelOverride null", { modelOverride: null }, /modelOverride/u],
    ["reasoning_effort unknown", { reasoning_effort: "extreme" }, /reasoning_effort/u],
    ["maxSteps 0", { maxSteps: 0 }, /maxSteps/u],
    ["maxSteps 501", { maxSteps: 501 }, /maxSteps/u],
    ["maxSteps 2.5", { maxSteps: 2.5 }, /maxSteps/u],
    ["maxSteps a string", { maxSteps: "5" }, /maxSteps/u],
  ])("refuses %s with 400 (§2 run settings)", async (_name, settings, message) => {
    const thread = await api.createThread();
    const trigger = await api.postMessage(thread.id, "q");
    const { status, body } = await api.call<ErrorBody>("POST", `/v1/thread/${thread.id}/runs`, {
      triggerMessageId: trigger.id,
      ...settings,
    });
    expect(status).toBe(400);
    expect(body.error.type).toBe("invalid_request");
    expect(body.error.message).toMatch(message);
    expect(sim.control.counts().runs).toBe(0);
  });

  it("accepts the bounds maxSteps 1 and 500 and every effort", async () => {
    for (const settings of [
      { maxSteps: 1, reasoning_effort: "none", modelOverride: "flash" },
      { maxSteps: 500, reasoning_effort: "high" },
      { reasoning_effort: "medium" },
    ]) {
      const { run } = await api.ask("q", settings);
      expect(run.settings).toEqual(settings);
    }
  });

  it("refuses a missing trigger or a message of another thread with 400", async () => {
    const thread = await api.createThread();
    const other = await api.createThread();
    const foreign = await api.postMessage(other.id, "elsewhere");
    const path = `/v1/thread/${thread.id}/runs`;
    for (const payload of [{}, { triggerMessageId: 1 }, { triggerMessageId: foreign.id }]) {
      const { status, body } = await api.call<ErrorBody>("POST", path, payload);
      expect(status).toBe(400);
      expect(body.error.message).toMatch(/triggerMessageId/u);
    }
  });

  it("answers 404 for an unknown thread", async () => {
    const { status } = await api.call("POST", `/v1/thread/${crypto.randomUUID()}/runs`, {
      triggerMessageId: crypto.randomUUID(),
    });
    expect(status).toBe(404);
  });
});

describe("§3 run lifecycle: queued → in_progress → completed", () => {
  it("works in_progress with output null, then completes with the answer in output", async () => {
    sim.control.enqueueAnswer({ chunks: ["Back", "off ", "doubles."], hang: true });
    const seen: string[] = [];
    sim.control.events.on("run-status", (run) => seen.push(run.status));
    const { run } = await api.ask("What is backoff?");
    await waitForText(run.id, "doubles.");
    const working = await api.call<SimulatorRun>("GET", `/v1/run/${run.id}`);
    expect(working.body).toMatchObject({
      status: "in_progress",
      output: null,
      modelUsed: "assistant-standard",
    });
    expect(seen).toEqual(["in_progress"]);

    sim.control.enqueueAnswer({ chunks: ["Back", "off ", "doubles."] });
    const second = await api.ask("What is backoff?");
    await sim.control.waitForRunEnd(second.run.id);
    const done = await api.call<SimulatorRun>("GET", `/v1/run/${second.run.id}`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      status: "completed",
      output: [{ type: "text", text: "Backoff doubles." }],
      modelUsed: "assistant-standard",
      error: null,
    });
  });

  it("reports modelUsed from modelOverride, or what a script says", async () => {
    const models: (string | null)[] = [];
    for (const settings of [{ modelOverride: "flash" }, { modelOverride: "max" }, {}]) {
      const { run } = await api.ask("q", settings);
      models.push((await sim.control.waitForRunEnd(run.id)).modelUsed);
    }
    sim.control.enqueueAnswer({ text: "x", modelUsed: "custom-model" });
    const { run } = await api.ask("q");
    models.push((await sim.control.waitForRunEnd(run.id)).modelUsed);
    expect(models).toEqual([
      "assistant-flash",
      "assistant-max",
      "assistant-standard",
      "custom-model",
    ]);
  });

  it("writes a generated Markdown answer when no script is set", async () => {
    await start({ queueDelayMs: 0, answer: { tokensPerSecond: Infinity, length: 700 } });
    const { run } = await api.ask("How should I cache API responses?");
    const ended = await sim.control.waitForRunEnd(run.id);
    const text = ended.output?.[0]?.text ?? "";
    expect(text.length).toBeGreaterThan(600);
    expect(text.length).toBeLessThanOrEqual(700);
    expect(text).toMatch(/^## /u);
  });
});

describe("§3 run lifecycle: failed (§7 rule 1)", () => {
  it("ends failed with the error text and output null", async () => {
    sim.control.enqueueAnswer({ fail: "the search tool timed out" });
    const { run } = await api.ask("q");
    await sim.control.waitForRunEnd(run.id);
    const { body } = await api.call<SimulatorRun>("GET", `/v1/run/${run.id}`);
    expect(body).toMatchObject({
      status: "failed",
      error: "the search tool timed out",
      output: null,
    });
  });

  it("can fail after writing part of the answer", async () => {
    sim.control.enqueueAnswer({
      chunks: ["one ", "two ", "three"],
      failAfterChars: 8,
      fail: "boom",
    });
    const { run } = await api.ask("q");
    const response = await api.fetch("GET", `/v1/run/${run.id}/stream?dialect=snapshot`);
    const read = await readSse(response);
    expect(read.events.at(-2)?.data).toBe(JSON.stringify({ text: "one two " }));
    expect(read.events.at(-1)).toEqual({
      event: "done",
      data: JSON.stringify({ status: "failed", error: "boom" }),
    });
    expect(sim.control.getRun(run.id)).toMatchObject({ status: "failed", output: null });
  });
});

describe("§4 POST /v1/runs/{id}/stop", () => {
  it("cancels a working run; output keeps the partial text", async () => {
    sim.control.enqueueAnswer({ chunks: ["partial ", "text"], hang: true });
    const { run } = await api.ask("q");
    await waitForText(run.id, "partial text");
    const { status, body } = await api.call<SimulatorRun>("POST", `/v1/runs/${run.id}/stop`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: run.id,
      status: "canceled",
      output: [{ type: "text", text: "partial text" }],
      error: null,
    });
    expect(sim.control.messages(run.threadId).map((m) => m.role)).toEqual(["user"]);
  });

  it("cancels a queued run with output null, whatever body is sent", async () => {
    await start({ queueDelayMs: 60_000 });
    const { run } = await api.ask("q");
    const { status, body } = await api.call<SimulatorRun>(
      "POST",
      `/v1/runs/${run.id}/stop`,
      undefined,
      { rawBody: "not json at all", headers: { "content-type": "text/plain" } },
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "canceled", output: null, modelUsed: null });
  });

  it("leaves an ended run unchanged", async () => {
    sim.control.enqueueAnswer({ text: "done" });
    const { run } = await api.ask("q");
    const ended = await sim.control.waitForRunEnd(run.id);
    const { status, body } = await api.call<SimulatorRun>("POST", `/v1/runs/${run.id}/stop`, {});
    expect(status).toBe(200);
    expect(body).toEqual(ended);
  });

  it("answers 404 for an unknown run and 404 on the singular path", async () => {
    expect((await api.call("POST", `/v1/runs/${crypto.randomUUID()}/stop`)).status).toBe(404);
    const { run } = await api.ask("q");
    expect((await api.call("POST", `/v1/run/${run.id}/stop`)).status).toBe(404);
  });
});

describe("§4 GET /v1/run/{id}", () => {
  it("returns the run with every §2 field", async () => {
    await start({ queueDelayMs: 60_000 });
    const { run } = await api.ask("q");
    const { status, body } = await api.call<SimulatorRun>("GET", `/v1/run/${run.id}`);
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(
      expect.arrayContaining([
        "id",
        "threadId",
        "assistantId",
        "status",
        "output",
        "modelUsed",
        "error",
      ]),
    );
    expect(body.status).toBe("queued");
  });

  it("answers 404 for unknown and malformed ids", async () => {
    for (const id of [crypto.randomUUID(), "123", "%E0%A4%A"]) {
      const { status, body } = await api.call<ErrorBody>("GET", `/v1/run/${id}`);
      expect(status).toBe(404);
      expect(body.error.type).toBe("not_found");
    }
  });
});

describe("§3 in_progress observed by polling", () => {
  it("is in_progress while a hanging run works", async () => {
    sim.control.hangRuns(true);
    const { run } = await api.ask("q");
    await inProgress(run.id);
    expect((await api.call<SimulatorRun>("GET", `/v1/run/${run.id}`)).body.status).toBe(
      "in_progress",
    );
  });
});
