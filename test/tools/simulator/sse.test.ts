import { createParser } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import type { SimulatorRun } from "../../../tools/simulator/resources.js";
import { encodeRunEvent, SSE_DIALECTS, sseFrame } from "../../../tools/simulator/sse.js";

/** §6: the frames of each dialect, read back by a spec-faithful SSE parser. */

function parse(text: string) {
  const events: { event: string | undefined; data: string }[] = [];
  const parser = createParser({ onEvent: (e) => events.push({ event: e.event, data: e.data }) });
  parser.feed(text);
  return events;
}

const run: SimulatorRun = {
  id: "r",
  threadId: "t",
  assistantId: "a",
  status: "in_progress",
  output: null,
  modelUsed: "assistant-standard",
  error: null,
  triggerMessageId: "m",
  settings: {},
  createdAt: "2024-01-01T00:00:00.000Z",
};

describe("sseFrame", () => {
  it("splits line breaks into data lines that a parser joins back with \\n", () => {
    const frame = sseFrame(" lead\nnext\r\nthird\rlast\n", "delta");
    expect(frame).toBe(
      "event: delta\ndata:  lead\ndata: next\ndata: third\ndata: last\ndata: \n\n",
    );
    expect(parse(frame)).toEqual([{ event: "delta", data: " lead\nnext\nthird\nlast\n" }]);
  });
});

describe("encodeRunEvent", () => {
  it("writes whole frames only, each a single event", () => {
    for (const dialect of SSE_DIALECTS) {
      const frames = [
        ...encodeRunEvent(dialect, { type: "status", written: "", run }),
        ...encodeRunEvent(dialect, { type: "delta", text: "a\nb", written: "a\nb", run }),
        ...encodeRunEvent(dialect, {
          type: "end",
          written: "a\nb",
          run: { ...run, status: "completed", output: [{ type: "text", text: "a\nb" }] },
        }),
      ];
      for (const frame of frames) {
        expect(frame.endsWith("\n\n")).toBe(true);
        expect(parse(frame)).toHaveLength(1);
      }
    }
  });

  it("the run dialect shows the text so far as output while the run works", () => {
    const [frame] = encodeRunEvent("run", { type: "delta", text: "b", written: "ab", run });
    expect(JSON.parse(parse(frame ?? "")[0]?.data ?? "")).toMatchObject({
      id: "r",
      status: "in_progress",
      output: [{ type: "text", text: "ab" }],
    });
  });
});
