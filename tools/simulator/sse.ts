import type { SimulatorStep } from "./answers.js";
import type { SimulatorRun } from "./resources.js";

/**
 * Encoders for the run stream (GET /v1/run/{id}/stream). The interface does not show its
 * event names or payloads (§6), so the simulator can speak several dialects that real
 * services use; a client that follows runs should cope with all of them. Each encoder
 * turns one run event into whole SSE frames (each ends with a blank line), which lets the
 * stream writer count events when a test asks it to drop the connection after K.
 */

export const SSE_DIALECTS = ["events", "openai", "snapshot", "run", "plain"] as const;
export type SseDialect = (typeof SSE_DIALECTS)[number];
export const DEFAULT_SSE_DIALECT: SseDialect = "events";

export function isSseDialect(value: string): value is SseDialect {
  return (SSE_DIALECTS as readonly string[]).includes(value);
}

/** What happened to a run, as a stream sees it. `run` is the run's state right after. */
export type RunStreamEvent =
  | { type: "status"; written: string; run: SimulatorRun }
  | { type: "delta"; text: string; written: string; run: SimulatorRun }
  /** A step began or changed; only the `events` dialect tells it (`event: step`). */
  | { type: "step"; step: SimulatorStep; written: string; run: SimulatorRun }
  | { type: "end"; written: string; run: SimulatorRun };

export const KEEP_ALIVE_FRAME = ": keep-alive\n\n";
export const DONE_FRAME = "data: [DONE]\n\n";

/**
 * One SSE frame. Line breaks inside `data` become several `data:` lines, as the SSE spec
 * requires (a parser joins them back with "\n"); a lone "\r" or "\r\n" also becomes "\n".
 */
export function sseFrame(data: string, event?: string): string {
  const head = event === undefined ? "" : `event: ${event}\n`;
  const lines = data.split(/\r\n|\r|\n/u).map((line) => `data: ${line}\n`);
  return `${head}${lines.join("")}\n`;
}

function json(data: unknown, event?: string): string {
  return sseFrame(JSON.stringify(data), event);
}

/** The run as the "run" dialect shows it mid-way: the text so far as its output. */
function runSoFar(run: SimulatorRun, written: string): SimulatorRun {
  return { ...run, output: written === "" ? null : [{ type: "text", text: written }] };
}

function endPayload(run: SimulatorRun): { status: string; error?: string } {
  return run.error === null ? { status: run.status } : { status: run.status, error: run.error };
}

function finishReason(run: SimulatorRun): string {
  if (run.status === "completed") return "stop";
  if (run.status === "failed") return "error";
  return "canceled";
}

function openaiChunk(delta: Record<string, string>, finish: string | null): unknown {
  return {
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

export function encodeRunEvent(dialect: SseDialect, event: RunStreamEvent): string[] {
  if (event.type === "step") return dialect === "events" ? [json(event.step, "step")] : [];
  switch (dialect) {
    case "events":
      if (event.type === "status") return [json({ status: event.run.status }, "status")];
      if (event.type === "delta") return [json({ text: event.text }, "delta")];
      return [json(endPayload(event.run), "done")];
    case "openai":
      if (event.type === "status") return [];
      if (event.type === "delta") return [json(openaiChunk({ content: event.text }, null))];
      return [json(openaiChunk({}, finishReason(event.run))), DONE_FRAME];
    case "snapshot":
      if (event.type === "status") return [];
      if (event.type === "delta") return [json({ text: event.written }, "message")];
      return [json(endPayload(event.run), "done")];
    case "run":
      if (event.type === "end") return [json(event.run)];
      return [json(runSoFar(event.run, event.written))];
    case "plain":
      if (event.type === "status") return [];
      if (event.type === "delta") return event.text === "" ? [] : [sseFrame(event.text)];
      return [sseFrame(event.run.status, "done")];
  }
}
