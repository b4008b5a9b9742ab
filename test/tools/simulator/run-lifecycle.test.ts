import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ScriptedAnswer } from "../../../tools/simulator/answers.js";
import type { RunLifecycle } from "../../../tools/simulator/run-lifecycle.js";
import type { RunStreamEvent } from "../../../tools/simulator/sse.js";
import { SimulatorState } from "../../../tools/simulator/state.js";
import { tokenize } from "../../../tools/simulator/tokens.js";

/** The run lifecycle (§3) in simulated time: the queue delay and the token rate. */

let state: SimulatorState;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  state.close();
  vi.useRealTimers();
});

function startRun(
  options: { queueDelayMs?: number; tokensPerSecond?: number; length?: number },
  script?: ScriptedAnswer,
  content = "question",
): { lifecycle: RunLifecycle; events: RunStreamEvent["type"][] } {
  state = new SimulatorState({
    now: () => 0,
    queueDelayMs: options.queueDelayMs ?? 100,
    answerLength: options.length,
    tokensPerSecond: options.tokensPerSecond ?? 50,
  });
  if (script) state.enqueueAnswer(script);
  const thread = state.createThread("token", "asst", undefined);
  const trigger = state.addMessage(thread.id, content);
  const lifecycle = state.startRun({ thread, trigger, settings: {}, hang: false });
  const events: RunStreamEvent["type"][] = [];
  lifecycle.subscribe((event) => events.push(event.type));
  return { lifecycle, events };
}

describe("§3 transitions in time", () => {
  it("stays queued for queueDelayMs, then writes one chunk per 1/tokensPerSecond", () => {
    const { lifecycle, events } = startRun(
      { queueDelayMs: 100, tokensPerSecond: 10 },
      { chunks: ["a", "b", "c"] },
    );
    expect(lifecycle.run.status).toBe("queued");
    vi.advanceTimersByTime(99);
    expect(lifecycle.run.status).toBe("queued");
    vi.advanceTimersByTime(1);
    expect(lifecycle.run.status).toBe("in_progress");
    expect(lifecycle.written).toBe("");
    vi.advanceTimersByTime(100);
    expect(lifecycle.written).toBe("a");
    vi.advanceTimersByTime(100);
    expect(lifecycle.written).toBe("ab");
    expect(lifecycle.run.output).toBeNull();
    vi.advanceTimersByTime(100);
    expect(lifecycle.run).toMatchObject({
      status: "completed",
      output: [{ type: "text", text: "abc" }],
      modelUsed: "assistant-standard",
    });
    expect(events).toEqual(["status", "delta", "delta", "delta", "end"]);
    expect(state.messages(lifecycle.run.threadId).map((m) => m.content)).toEqual([
      "question",
      "abc",
    ]);
  });

  it("writes the generated answer at the default 50 tokens per second (~4 characters each)", () => {
    const started = Date.now();
    const { lifecycle } = startRun({ queueDelayMs: 0, length: 1000 });
    vi.advanceTimersByTime(0);
    vi.advanceTimersByTime(1000);
    // One second at 50 tokens per second: 50 chunks, about 200 characters.
    expect(lifecycle.written.length).toBeGreaterThan(120);
    expect(lifecycle.written.length).toBeLessThan(220);
    vi.runAllTimers();
    const text = lifecycle.run.output?.[0]?.text ?? "";
    expect(text.length).toBeGreaterThan(950);
    // The whole answer took one 20 ms tick per chunk.
    expect(Date.now() - started).toBe(tokenize(text).length * 20);
  });

  it("writes several chunks per millisecond when the rate is above 1000 per second", () => {
    const { lifecycle } = startRun(
      { queueDelayMs: 0, tokensPerSecond: 5000 },
      { chunks: Array.from({ length: 12 }, (_, i) => `${i},`) },
    );
    vi.advanceTimersByTime(0);
    vi.advanceTimersByTime(1);
    expect(lifecycle.written).toBe("0,1,2,3,4,");
    vi.advanceTimersByTime(2);
    expect(lifecycle.run.status).toBe("completed");
  });

  it("a script's tokensPerSecond overrides the default", () => {
    const { lifecycle } = startRun(
      { queueDelayMs: 0, tokensPerSecond: 1 },
      {
        chunks: ["x", "y"],
        tokensPerSecond: 1000,
      },
    );
    vi.advanceTimersByTime(2);
    expect(lifecycle.run.status).toBe("completed");
  });

  it("fails once failAfterChars are written; output null, error set", () => {
    const { lifecycle, events } = startRun(
      { queueDelayMs: 0, tokensPerSecond: 1000 },
      {
        chunks: ["ab", "cd", "ef"],
        failAfterChars: 3,
        fail: "tool crashed",
      },
    );
    vi.runAllTimers();
    expect(lifecycle.written).toBe("abcd");
    expect(lifecycle.run).toMatchObject({ status: "failed", error: "tool crashed", output: null });
    expect(events).toEqual(["status", "delta", "delta", "end"]);
  });

  it("stop while queued cancels with output null and no model", () => {
    const { lifecycle, events } = startRun({ queueDelayMs: 1000 }, { text: "never" });
    lifecycle.stop();
    expect(lifecycle.run).toMatchObject({ status: "canceled", output: null, modelUsed: null });
    vi.runAllTimers();
    expect(lifecycle.run.status).toBe("canceled");
    expect(events).toEqual(["end"]);
  });

  it("a hanging run writes its text and stays in_progress until stopped", () => {
    const { lifecycle } = startRun(
      { queueDelayMs: 0, tokensPerSecond: 1000 },
      {
        text: "some words here",
        hang: true,
      },
    );
    vi.advanceTimersByTime(60_000);
    expect(lifecycle.run.status).toBe("in_progress");
    expect(lifecycle.written).toBe("some words here");
    lifecycle.stop();
    expect(lifecycle.run).toMatchObject({
      status: "canceled",
      output: [{ type: "text", text: "some words here" }],
    });
    lifecycle.stop();
    expect(lifecycle.run.status).toBe("canceled");
  });
});

describe("scripted steps", () => {
  it("reports each step event where the script puts it among the chunks, one tick each", () => {
    const searching = { id: "s1", title: "Searching the docs", status: "in_progress" } as const;
    const { lifecycle } = startRun(
      { queueDelayMs: 100, tokensPerSecond: 10 },
      {
        chunks: ["a", "b", "c"],
        steps: [
          // Out of order on purpose: events are reported by position, then as scripted.
          { id: "s2", title: "Checking", status: "in_progress", atChars: 2 },
          { id: "s2", title: "Checking", status: "complete", atChars: 99 },
          searching,
          { ...searching, status: "complete", details: "2 pages", atChars: 1 },
        ],
      },
    );
    const seen: string[] = [];
    lifecycle.subscribe((event) => {
      if (event.type === "step")
        seen.push(`${event.step.id}:${event.step.status}@${event.written}`);
      else if (event.type === "delta") seen.push(event.text);
      else seen.push(event.run.status);
    });
    vi.advanceTimersByTime(200);
    expect(seen).toEqual(["in_progress", "s1:in_progress@"]);
    expect([...lifecycle.steps.values()]).toEqual([searching]);
    vi.advanceTimersByTime(100);
    expect(seen.at(-1)).toBe("a");
    vi.advanceTimersByTime(600);
    expect(seen).toEqual([
      "in_progress",
      "s1:in_progress@",
      "a",
      "s1:complete@a",
      "b",
      "s2:in_progress@ab",
      "c",
      "s2:complete@abc",
      "completed",
    ]);
    // What a stream opened now replays: each step as it last was, in the order they began.
    expect([...lifecycle.steps.values()]).toEqual([
      { id: "s1", title: "Searching the docs", status: "complete", details: "2 pages" },
      { id: "s2", title: "Checking", status: "complete" },
    ]);
    expect(lifecycle.run.output).toEqual([{ type: "text", text: "abc" }]);
  });
});
