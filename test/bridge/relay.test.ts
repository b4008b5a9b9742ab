import { afterEach, describe, expect, it, vi } from "vitest";
import type { AssistantService, CallOptions } from "../../src/bridge/ports.js";
import { Relay } from "../../src/bridge/relay.js";
import type { RunStreamUpdate } from "../../src/service/run-stream.js";
import type { Run } from "../../src/service/schemas.js";

afterEach(() => {
  vi.useRealTimers();
});

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
    vi.useFakeTimers();
    const { service, seen } = fakeService([{ type: "text", text: "Hel" }], [], [working, done]);
    const texts: string[] = [];
    const following = new Relay(service, { streamCheckMs: 3_000 }).follow("r1", {
      onText: (text) => texts.push(text),
    });
    await vi.advanceTimersByTimeAsync(2_999);
    expect(seen.gets).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen.gets).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000);
    await expect(following).resolves.toEqual(done);
    expect(texts).toEqual(["Hel"]);
    expect(seen.closed).toBe(true);
  });

  it("keeps a slow stream open while the run is still going", async () => {
    vi.useFakeTimers();
    const { service, seen, resume } = fakeService(
      [{ type: "text", text: "Hel" }],
      [
        { type: "text", text: "Hello." },
        { type: "status", status: "completed" },
      ],
      [working, working, done],
    );
    const texts: string[] = [];
    const following = new Relay(service, { streamCheckMs: 3_000 }).follow("r1", {
      onText: (text) => texts.push(text),
    });
    await vi.advanceTimersByTimeAsync(6_000);
    expect(seen.gets).toBe(2);
    expect(seen.closed).toBe(false);
    resume();
    await expect(following).resolves.toEqual(done);
    expect(texts).toEqual(["Hel", "Hello."]);
  });
});
