import { isStepEventName, type RunStep, RunStreamSteps } from "./run-stream-steps.js";
import { type Run, RunSchema, type RunStatus, RunStatusSchema, runAnswer } from "./schemas.js";

/**
 * What one server-sent event of `GET /v1/run/{id}/stream` means. The interface does not
 * show event names or payloads (§6), so every reasonable dialect is accepted:
 *
 * - increments: `{"delta": "…"}`, `{"delta": {"text"|"content": …}}`,
 *   `{"choices":[{"delta":{"content": …}}]}`, and `{"text"|"content": …}` in an event
 *   named after a delta (delta, token, message.delta, run.delta, …);
 * - snapshots, which replace the text: `{"snapshot": "…"}`, `{"text"|"content": …}` in an
 *   event named message or snapshot, and a run object whose `output` has a text;
 * - status: `{"status": "<run status>"}` and run objects;
 * - the end: `[DONE]`, or an event named done, end, complete(d), run.completed, run.failed
 *   or run.canceled (after its payload has been taken in);
 * - plain text (data that is not JSON) of an unnamed, delta, message, text, token or
 *   content event is an increment;
 * - steps: what the assistant is doing besides writing (a step, a tool in use), in the
 *   shapes listed in run-stream-steps.ts; their fields are never the answer's text.
 *
 * Without an SSE event name, a payload's `type` serves as one when it is a name listed
 * here. Events with any other name are ignored unless they carry a whole run object: their
 * text is not the answer's (reasoning, tool output, errors).
 */

/** What the run stream yields, in order. */
export type RunStreamUpdate =
  /** All the text written so far (cumulative, deduplicated). */
  | { type: "text"; text: string }
  | { type: "status"; status: RunStatus }
  /** A whole run object arrived (its status and text are also emitted). */
  | { type: "run"; run: Run }
  /** A step began or changed (the whole step as it now is). */
  | { type: "step"; step: RunStep }
  /** Always the last item. */
  | { type: "end"; reason: "done" | "eof" | "idle" };

/** How an event name says its `text`/`content` field relates to the text so far. */
type TextMode = "increment" | "snapshot" | "ambiguous";

const TEXT_MODES = new Map<string, TextMode>([
  ["delta", "increment"],
  ["token", "increment"],
  ["message.delta", "increment"],
  ["run.delta", "increment"],
  ["thread.message.delta", "increment"],
  ["response.output_text.delta", "increment"],
  ["content_block_delta", "increment"],
  ["text_delta", "increment"],
  ["message", "snapshot"],
  ["snapshot", "snapshot"],
  ["", "ambiguous"],
  ["text", "ambiguous"],
  ["content", "ambiguous"],
  ["status", "ambiguous"],
  ["run.status", "ambiguous"],
]);

const END_NAMES = new Set(["done", "end", "complete", "completed"]);
const END_STATUSES = new Map<string, RunStatus>([
  ["run.completed", "completed"],
  ["run.failed", "failed"],
  ["run.canceled", "canceled"],
  ["run.cancelled", "canceled"],
]);
for (const name of [...END_NAMES, ...END_STATUSES.keys()]) TEXT_MODES.set(name, "ambiguous");

const PLAIN_TEXT_NAMES = new Set(["", "delta", "message", "text", "token", "content"]);
const STATUS_NAMES = new Set(["status", "run.status"]);

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A text field's value: a string, an OpenAI-style `{"value": …}`, or a list of content
 * parts whose text parts are joined (parts of other types, such as images, are skipped).
 */
function textValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (isObject(value)) return typeof value.value === "string" ? value.value : undefined;
  if (!Array.isArray(value)) return undefined;
  const parts = value.flatMap((part) => {
    if (typeof part === "string") return [part];
    if (!isObject(part)) return [];
    if (typeof part.type === "string" && !part.type.includes("text")) return [];
    const text = textValue(part.text);
    return text === undefined ? [] : [text];
  });
  return parts.length > 0 ? parts.join("") : undefined;
}

/** A whole run: id, a valid status and at least one other field of a run record. */
function asRun(value: unknown): Run | undefined {
  if (!isObject(value) || typeof value.id !== "string" || !("status" in value)) return undefined;
  if (!("output" in value || "threadId" in value || "assistantId" in value)) return undefined;
  const parsed = RunSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function parseJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** Interprets the events of one stream in order, keeping the text and status so far. */
export class RunStreamDialect {
  private text = "";
  private status: RunStatus | undefined;
  private readonly steps = new RunStreamSteps();

  /**
   * Takes in one event, appending the updates it causes to `out`.
   * Returns true when the event ends the stream.
   */
  interpret(event: { event?: string | undefined; data: string }, out: RunStreamUpdate[]): boolean {
    const { data } = event;
    if (data.trim() === "[DONE]") return true;
    const payload = parseJson(data);
    const typeName = isObject(payload) && typeof payload.type === "string" ? payload.type : "";
    const named = TEXT_MODES.has(typeName) || isStepEventName(typeName);
    const name = (event.event ?? (named ? typeName : "")).toLowerCase();
    const ends = END_NAMES.has(name) || END_STATUSES.has(name);
    let statusGiven = false;

    if (!isObject(payload)) {
      if (Array.isArray(payload)) return ends;
      const text = typeof payload === "string" ? payload : data;
      if (STATUS_NAMES.has(name)) statusGiven = this.setStatus(text.trim(), out);
      else if (PLAIN_TEXT_NAMES.has(name)) this.append(text, out);
    } else if (this.steps.take(name, payload, out)) {
      return ends;
    } else {
      const run = asRun(payload) ?? asRun(payload.run);
      const mode = TEXT_MODES.get(name);
      if (run) {
        out.push({ type: "run", run });
        const answer = run.output && run.output.length > 0 ? runAnswer(run) : undefined;
        if (answer !== undefined) this.replace(answer, out);
        statusGiven = this.setStatus(run.status, out);
      } else if (mode) {
        this.takeText(payload, mode, out);
        statusGiven = this.setStatus(payload.status, out);
        if (payload.done === true) return true;
      }
    }
    const implied = END_STATUSES.get(name);
    if (implied && !statusGiven) this.setStatus(implied, out);
    return ends;
  }

  private takeText(payload: Json, mode: TextMode, out: RunStreamUpdate[]): void {
    if (typeof payload.snapshot === "string") {
      this.replace(payload.snapshot, out);
      return;
    }
    const { delta } = payload;
    if (delta !== undefined) {
      const text = isObject(delta)
        ? (textValue(delta.text) ?? textValue(delta.content) ?? textValue(delta.value))
        : textValue(delta);
      if (text !== undefined) this.append(text, out);
      return;
    }
    if (Array.isArray(payload.choices)) {
      // OpenAI chunks: the increment is choices[0].delta.content, which may be absent.
      const choice: unknown = payload.choices[0];
      const content = isObject(choice) && isObject(choice.delta) ? choice.delta.content : undefined;
      if (typeof content === "string") this.append(content, out);
      return;
    }
    const text = textValue(payload.text) ?? textValue(payload.content);
    if (text !== undefined) {
      if (mode === "increment") this.append(text, out);
      else if (mode === "snapshot") this.replace(text, out);
      else this.ambiguous(text, out);
      return;
    }
    if (Array.isArray(payload.output)) {
      const first: unknown = payload.output[0];
      const answer = isObject(first) ? textValue(first.text) : undefined;
      if (answer !== undefined) this.replace(answer, out);
    }
  }

  /**
   * The rule for a text that could be either an increment or the whole text so far:
   * when the text so far is non-empty and the incoming text starts with all of it, the
   * incoming text is a snapshot (it replaces); otherwise it is an increment (appended).
   * A snapshot stream therefore never duplicates text; the price is that an increment
   * that happens to repeat everything written so far is taken as no change, which only
   * the interim display can show (the final text always comes from `GET /v1/run/{id}`).
   */
  private ambiguous(text: string, out: RunStreamUpdate[]): void {
    if (this.text.length > 0 && text.startsWith(this.text)) this.replace(text, out);
    else this.append(text, out);
  }

  private append(increment: string, out: RunStreamUpdate[]): void {
    if (increment.length > 0) this.replace(this.text + increment, out);
  }

  private replace(text: string, out: RunStreamUpdate[]): void {
    if (text === this.text) return;
    this.text = text;
    out.push({ type: "text", text });
  }

  /** Emits a status when it is a valid one and new; true when it was a valid status. */
  private setStatus(value: unknown, out: RunStreamUpdate[]): boolean {
    const parsed = RunStatusSchema.safeParse(value);
    if (!parsed.success) return false;
    if (parsed.data !== this.status) {
      this.status = parsed.data;
      out.push({ type: "status", status: parsed.data });
    }
    return true;
  }
}
