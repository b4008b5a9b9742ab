import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SimulatorOptions } from "../../../tools/simulator/options.js";
import {
  type RunningSimulator,
  type SimulatorRun,
  type SseDialect,
  startSimulator,
} from "../../../tools/simulator/server.js";
import { jsonData, readSse, ServiceFetch, type SseRead } from "./service-fetch.js";

let sim: RunningSimulator;
let api: ServiceFetch;

async function start(options: SimulatorOptions = {}) {
  await sim?.close();
  sim = await startSimulator({ queueDelayMs: 0, answer: { tokensPerSecond: 2000 }, ...options });
  api = new ServiceFetch(sim.url);
}

beforeEach(() => start());
afterEach(async () => {
  await sim.close();
});

const CHUNKS = ["## Hi", " there\n", "\n- one ", "é🎉", "\n```ts\nx\n```"];
const FULL = CHUNKS.join("");

async function streamOf(runId: string, query = "") {
  const response = await api.fetch("GET", `/v1/run/${runId}/stream${query}`);
  return { response, read: await readSse(response) };
}

/** The text a client assembles from each dialect, and the end status it states. */
function assemble(dialect: SseDialect, read: SseRead): { text: string; end: string | undefined } {
  const last = read.events.at(-1);
  switch (dialect) {
    case "events": {
      const deltas = read.events.filter((e) => e.event === "delta");
      const text = deltas.map((e) => (JSON.parse(e.data) as { text: string }).text).join("");
      return { text, end: last?.event === "done" ? JSON.parse(last.data).status : undefined };
    }
    case "openai": {
      const chunks = jsonData<{
        choices: { delta: { content?: string }; finish_reason: string }[];
      }>(read);
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
      return {
        text,
        end: last?.data === "[DONE]" ? chunks.at(-1)?.choices[0]?.finish_reason : undefined,
      };
    }
    case "snapshot": {
      const snapshots = read.events.filter((e) => e.event === "message");
      const texts = snapshots.map((e) => (JSON.parse(e.data) as { text: string }).text);
      for (const [i, text] of texts.entries())
        expect(text.startsWith(texts[i - 1] ?? "")).toBe(true);
      return {
        text: texts.at(-1) ?? "",
        end: last?.event === "done" ? JSON.parse(last.data).status : undefined,
      };
    }
    case "run": {
      const runs = jsonData<SimulatorRun>(read);
      for (const event of read.events) expect(event.event).toBeUndefined();
      const withText = runs.filter((r) => r.output !== null);
      return { text: withText.at(-1)?.output?.[0]?.text ?? "", end: runs.at(-1)?.status };
    }
    case "plain": {
      const data = read.events.filter((e) => e.event === undefined).map((e) => e.data);
      return { text: data.join(""), end: last?.event === "done" ? last.data : undefined };
    }
  }
}

describe("§4 GET /v1/run/{id}/stream (§6 events)", () => {
  it("is a text/event-stream with cache-control no-cache, ending when the run ends", async () => {
    sim.control.enqueueAnswer({ chunks: CHUNKS });
    const { run } = await api.ask("q");
    const { response, read } = await streamOf(run.id);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/u);
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(read.ended).toBe("eof");
  });

  it("speaks the documented default dialect: event status / delta / done", async () => {
    sim.control.enqueueAnswer({ chunks: CHUNKS });
    const { run } = await api.ask("q");
    const { read } = await streamOf(run.id);
    const names = new Set(read.events.map((e) => e.event));
    expect([...names].every((n) => n === "status" || n === "delta" || n === "done")).toBe(true);
    for (const e of read.events.filter((x) => x.event === "status")) {
      expect(["queued", "in_progress"]).toContain(JSON.parse(e.data).status);
    }
    expect(assemble("events", read)).toEqual({ text: FULL, end: "completed" });
    expect(read.events.at(-1)).toEqual({ event: "done", data: '{"status":"completed"}' });
  });

  it.each(["events", "openai", "snapshot", "run", "plain"] as const)(
    "dialect %s: the assembled text equals output[0].text",
    async (dialect) => {
      sim.control.enqueueAnswer({ chunks: CHUNKS });
      const { run } = await api.ask("q");
      const { read } = await streamOf(run.id, `?dialect=${dialect}`);
      const ended = await sim.control.waitForRunEnd(run.id);
      expect(ended.output?.[0]?.text).toBe(FULL);
      expect(assemble(dialect, read)).toEqual({
        text: FULL,
        end: dialect === "openai" ? "stop" : "completed",
      });
    },
  );

  it.each([
    ["events", "failed"],
    ["openai", "error"],
    ["snapshot", "failed"],
    ["run", "failed"],
    ["plain", "failed"],
  ] as const)("dialect %s states a failed end as %s", async (dialect, end) => {
    sim.control.enqueueAnswer({ chunks: ["par", "tial"], fail: "broken", failAfterChars: 3 });
    const { run } = await api.ask("q");
    const { read } = await streamOf(run.id, `?dialect=${dialect}`);
    expect(assemble(dialect, read)).toEqual({ text: "par", end });
  });

  it("uses the dialect given as an option, or set by the control", async () => {
    await start({ dialect: "plain" });
    sim.control.enqueueAnswer({ chunks: ["a\nb"] });
    const first = await api.ask("q");
    const plain = await streamOf(first.run.id);
    expect(plain.read.events).toEqual([
      { event: undefined, data: "a\nb" },
      { event: "done", data: "completed" },
    ]);
    sim.control.setDialect("snapshot");
    sim.control.enqueueAnswer({ chunks: ["a", "b"] });
    const second = await api.ask("q");
    const snapshot = await streamOf(second.run.id);
    expect(assemble("snapshot", snapshot.read)).toEqual({ text: "ab", end: "completed" });
  });

  it("replays what was written, then follows live until the end (stop → canceled)", async () => {
    await start({ queueDelayMs: 60_000 });
    const { run } = await api.ask("q");
    const response = await api.fetch("GET", `/v1/run/${run.id}/stream`);
    // Headers arrived, so the stream follows the run; the end arrives live on stop.
    const reading = readSse(response);
    await api.call("POST", `/v1/runs/${run.id}/stop`);
    const read = await reading;
    expect(read.events).toEqual([
      { event: "status", data: '{"status":"queued"}' },
      { event: "done", data: '{"status":"canceled"}' },
    ]);
    expect(read.ended).toBe("eof");
  });

  it("replays a finished run in full and closes", async () => {
    sim.control.enqueueAnswer({ chunks: CHUNKS });
    const { run } = await api.ask("q");
    await sim.control.waitForRunEnd(run.id);
    const { read } = await streamOf(run.id);
    expect(read.events).toEqual([
      { event: "delta", data: JSON.stringify({ text: FULL }) },
      { event: "done", data: '{"status":"completed"}' },
    ]);
  });

  it("tells scripted steps as `event: step` in the events dialect only, and replays each as it is", async () => {
    const searching = { id: "s1", title: "Searching the docs", status: "in_progress" } as const;
    const steps = [
      searching,
      { ...searching, status: "complete", details: "2 pages", atChars: 3 },
      { id: "s2", title: "Checking", status: "error", atChars: 99 },
    ] as const;
    for (let i = 0; i < 5; i++) sim.control.enqueueAnswer({ chunks: CHUNKS, steps: [...steps] });
    const runs = [];
    for (let i = 0; i < 5; i++) runs.push((await api.ask("q")).run);
    for (const run of runs) await sim.control.waitForRunEnd(run.id);
    const [events, ...others] = runs;
    const { read } = await streamOf(events?.id ?? "");
    expect(read.events).toEqual([
      {
        event: "step",
        data: '{"id":"s1","title":"Searching the docs","status":"complete","details":"2 pages"}',
      },
      { event: "step", data: '{"id":"s2","title":"Checking","status":"error"}' },
      { event: "delta", data: JSON.stringify({ text: FULL }) },
      { event: "done", data: '{"status":"completed"}' },
    ]);
    const dialects = ["openai", "snapshot", "run", "plain"] as const;
    for (const [i, run] of others.entries()) {
      const dialect = dialects[i] ?? "openai";
      const other = await streamOf(run.id, `?dialect=${dialect}`);
      expect(other.read.events.some((e) => e.event === "step" || e.data.includes("s1"))).toBe(
        false,
      );
      expect(assemble(dialect, other.read).text).toBe(FULL);
    }
  });

  it("sends `: keep-alive` comments every keepAliveMs while nothing happens", async () => {
    await start({ keepAliveMs: 5 });
    sim.control.enqueueAnswer({ chunks: ["x"], hang: true });
    const { run } = await api.ask("q");
    const response = await api.fetch("GET", `/v1/run/${run.id}/stream`);
    const read = await readSse(response, (r) => r.comments.length >= 2);
    expect(read.comments.slice(0, 2).map((c) => c.trim())).toEqual(["keep-alive", "keep-alive"]);
  });

  it("answers 404 for an unknown run, another person's run, and 400 for an unknown dialect", async () => {
    const { run } = await api.ask("q");
    expect((await api.call("GET", `/v1/run/${crypto.randomUUID()}/stream`)).status).toBe(404);
    const stranger = new ServiceFetch(sim.url, "stranger");
    expect((await stranger.call("GET", `/v1/run/${run.id}/stream`)).status).toBe(404);
    expect((await api.call("GET", `/v1/run/${run.id}/stream?dialect=xml`)).status).toBe(400);
  });
});
