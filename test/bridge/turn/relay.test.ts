import { describe, expect, it } from "vitest";
import type { AssistantService, CallOptions } from "../../../src/bridge/ports.js";
import { Relay, RunAbandoned } from "../../../src/bridge/turn/relay.js";
import type { RunStreamUpdate } from "../../../src/service/run-stream.js";
import type { Run } from "../../../src/service/schemas.js";
import { ManualClock } from "../../support/manual-clock.js";

const working: Run = { id: "r1", status: "in_progress", output: null };
const done: Run = { id: "r1", status: "completed", output: [{ type: "text", text: "Hello." }] };

/**
 * A service whose stream yields `before`, then falls silent until `resume` is called (or
 * the relay closes it), then yields `after`. getRun answers from `runs`, one per call.
 */
function fakeService(before: RunStreamUpdate[], after: RunStreamUpdate[], runs: Run[]) {
  const seen = { gets: 0, closed: false };
  let resume: () => void = () => {};
  const service = {
    async *streamRun(_runId: string, opts: CallOptions = {}) {
      yield* before;
      await new Promise<void>((resolve, reject) => {
        resume = resolve;
        opts.signal?.addEventListener("abort", () => {
          seen.closed = true;
          reject(new Error("closed"));
        });
      });
      yield* after;
    },
    async getRun() {
      const run = runs[Math.min(seen.gets, runs.length - 1)] as Run;
      seen.gets++;
      return run;
    },
  };
  return { service: service as unknown as AssistantService, seen, resume: () => resume() };
}

describe("Relay with a stream that falls silent", () => {
  it("asks the run itself, returns it once ended, and closes the stalled stream", async () => {
    const clock = new ManualClock();
    const { service, seen } = fakeService([{ type: "text", text: "Hel" }], [], [working, done]);
    const texts: string[] = [];
    const following = new Relay(service, { streamCheckMs: 3_000, clock }).follow("r1", {
      onText: (text) => texts.push(text),
    });
    await clock.advance(2_999);
    expect(seen.gets).toBe(0);
    await clock.advance(1);
    expect(seen.gets).toBe(1);
    await clock.advance(3_000);
    await expect(following).resolves.toEqual(done);
    expect(texts).toEqual(["Hel"]);
    expect(seen.closed).toBe(true);
  });

  it("keeps a slow stream open while the run is still going", async () => {
    const clock = new ManualClock();
    const { service, seen, resume } = fakeService(
      [{ type: "text", text: "Hel" }],
      [
        { type: "text", text: "Hello." },
        { type: "status", status: "completed" },
      ],
      [working, working, done],
    );
    const texts: string[] = [];
    const following = new Relay(service, { streamCheckMs: 3_000, clock }).follow("r1", {
      onText: (text) => texts.push(text),
    });
    await clock.advance(6_000);
    expect(seen.gets).toBe(2);
    expect(seen.closed).toBe(false);
    resume();
    await expect(following).resolves.toEqual(done);
    expect(texts).toEqual(["Hel", "Hello."]);
  });
});

describe("Relay polling without a stream", () => {
  /** A service whose stream always breaks at once; getRun answers from `runs`. */
  function pollingService(runs: Run[]) {
    const seen = { gets: 0 };
    const service = {
      // biome-ignore lint/correctness/useYield: a stream that breaks before its first update
      async *streamRun() {
        throw new Error("reset");
      },
      async getRun() {
        const run = runs[Math.min(seen.gets, runs.length - 1)] as Run;
        seen.gets++;
        return run;
      },
    };
    return { service: service as unknown as AssistantService, seen };
  }

  it("polls at its interval once the stream reopens are used up", async () => {
    const clock = new ManualClock();
    const { service, seen } = pollingService([working, working, working, done]);
    const relay = new Relay(service, { streamReopens: 0, pollIntervalMs: 1_000, clock });
    const following = relay.follow("r1", { onText: () => undefined });
    await clock.advance(0);
    expect(seen.gets).toBe(1);
    expect(clock.pending).toBe(1);
    await clock.advance(999);
    expect(seen.gets).toBe(1);
    await clock.advance(1);
    expect(seen.gets).toBe(2);
    await clock.advance(2_000);
    await expect(following).resolves.toEqual(done);
    expect(clock.pending).toBe(0);
  });

  it("gives up with RunAbandoned when aborted during the wait between polls", async () => {
    const clock = new ManualClock();
    const { service } = pollingService([working]);
    const controller = new AbortController();
    const relay = new Relay(service, { streamReopens: 0, clock });
    const following = relay.follow("r1", { signal: controller.signal, onText: () => undefined });
    await clock.advance(0);
    expect(clock.pending).toBe(1); // waiting to poll again
    controller.abort();
    await expect(following).rejects.toBeInstanceOf(RunAbandoned);
    expect(clock.pending).toBe(0);
  });
});

describe("Relay with a stream that reports steps", () => {
  it("passes each step on in order, between the texts, and counts one as the run started", async () => {
    const clock = new ManualClock();
    const searching = { id: "s1", title: "Searching the docs", status: "in_progress" } as const;
    const { service } = fakeService(
      [
        { type: "step", step: searching },
        { type: "text", text: "Hel" },
        { type: "step", step: { ...searching, status: "complete", details: "2 pages" } },
        { type: "text", text: "Hello." },
        { type: "status", status: "completed" },
      ],
      [],
      [done],
    );
    const seen: string[] = [];
    const following = new Relay(service, { clock }).follow("r1", {
      onText: (text) => seen.push(`text ${text}`),
      onStarted: () => seen.push("started"),
      onStep: (step) => seen.push(`step ${step.id} ${step.status} ${step.details ?? ""}`.trim()),
    });
    await expect(following).resolves.toEqual(done);
    expect(seen).toEqual([
      "started",
      "step s1 in_progress",
      "text Hel",
      "step s1 complete 2 pages",
      "text Hello.",
    ]);
  });
});
