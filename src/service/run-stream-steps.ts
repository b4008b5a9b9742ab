/**
 * The steps a run's stream reports besides its text: a step of work, a tool being used.
 * The interface does not show such events (§6), so the common shapes are recognised:
 *
 * - the simulator's dialect: `event: step` with `{id, title, status, details?}`, and the
 *   same fields in events named step.*, run.step(.*), tool, tool_call(.*), tool_use(.*),
 *   tool_result or function_call(.*), also nested as `step`, `tool_call` or `tool_use`
 *   (`name`, `tool` or `function.name` serve as the title; `tool_call_id`, `tool_use_id`,
 *   `call_id` or `step_id` as the id);
 * - OpenAI Assistants run steps (`thread.run.step.*`: tool calls titled by their tools;
 *   message creation is the text, not a step);
 * - OpenAI Responses output items whose type ends in `_call` (`response.output_item.added`
 *   / `.done`);
 * - Anthropic `tool_use` content blocks (`content_block_start` … `content_block_stop`);
 * - OpenAI chat chunks' `delta.tool_calls` (complete once a `finish_reason` comes).
 *
 * A status the event does not give is read from its name (`….completed` → complete,
 * `….failed` → error, tool_result → complete), else in_progress. An event without an id
 * is keyed by its title; one with neither is ignored.
 */

export type RunStepStatus = "pending" | "in_progress" | "complete" | "error";

/** One step as the stream tells it (the bridge's ReplyStep has this shape). */
export interface RunStep {
  /** Stable across updates of the same step. */
  id: string;
  title: string;
  status: RunStepStatus;
  details?: string | undefined;
}

/** Bounds on what one stream can make the bot keep and show (a title is a status line). */
const MAX_STEPS = 100;
const MAX_TITLE = 200;
const MAX_DETAILS = 500;

/** Where step updates go: the stream's list of updates. */
interface StepOut {
  push(update: { type: "step"; step: RunStep }): unknown;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined;

const STEP_NAMES = [
  "step",
  "run.step",
  "thread.run.step",
  "tool",
  "tool_call",
  "tool_use",
  "tool_result",
  "function_call",
];
const ITEM_NAMES = new Set(["response.output_item.added", "response.output_item.done"]);
const BLOCK_NAMES = new Set(["content_block_start", "content_block_stop"]);
const TOOL_BLOCKS = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);

/** Whether events of this name are about steps (and never carry the answer's text). */
export function isStepEventName(name: string): boolean {
  return (
    ITEM_NAMES.has(name) ||
    BLOCK_NAMES.has(name) ||
    STEP_NAMES.some((base) => name === base || name.startsWith(`${base}.`))
  );
}

const STATUS_WORDS: [RunStepStatus, string[]][] = [
  ["pending", ["pending", "queued", "waiting"]],
  ["in_progress", ["in_progress", "in-progress", "running", "started", "active", "searching"]],
  ["complete", ["complete", "completed", "done", "succeeded", "success", "finished"]],
  ["error", ["error", "failed", "failure", "cancelled", "canceled", "expired", "incomplete"]],
];

function statusWord(value: unknown): RunStepStatus | undefined {
  if (typeof value !== "string") return undefined;
  const word = value.toLowerCase();
  return STATUS_WORDS.find(([, words]) => words.includes(word))?.[0];
}

/** The status an event's name implies (its last dot-separated word), else in_progress. */
function statusOfName(name: string): RunStepStatus {
  if (name === "tool_result") return "complete";
  const last = name.slice(name.lastIndexOf(".") + 1);
  if (last === "created" || last === "added") return "in_progress";
  return statusWord(last) ?? "in_progress";
}

/** `web_search_call` → "web search"; a tool's type as a title. */
const wordsOf = (type: string): string => type.replace(/_call$/u, "").replaceAll("_", " ");

/** What one event says of one step; absent fields keep what was known. */
interface Sighting {
  key: string | undefined;
  title: string | undefined;
  status: RunStepStatus;
  details: string | undefined;
}

function generic(name: string, payload: Json): Sighting {
  const inner = [payload.step, payload.tool_call, payload.tool_use].find(isObject) ?? payload;
  const fn = isObject(inner.function) ? inner.function : {};
  const title = str(inner.title) ?? str(inner.name) ?? str(inner.tool) ?? str(fn.name);
  const id =
    str(inner.id) ??
    str(inner.tool_call_id) ??
    str(inner.tool_use_id) ??
    str(inner.call_id) ??
    str(inner.step_id);
  return {
    key: id ?? title,
    title,
    status: statusWord(inner.status) ?? statusOfName(name),
    details: str(inner.details) ?? str(inner.detail) ?? str(inner.description),
  };
}

/** An OpenAI Assistants run step: only tool calls are steps. */
function assistantsStep(name: string, payload: Json): Sighting | undefined {
  if (name.endsWith(".delta")) return undefined;
  const details = isObject(payload.step_details) ? payload.step_details : {};
  if (payload.type !== "tool_calls" && details.type !== "tool_calls") return undefined;
  const calls = Array.isArray(details.tool_calls) ? details.tool_calls.filter(isObject) : [];
  const tools = calls.map((call) => {
    const fn = isObject(call.function) ? call.function : {};
    return str(fn.name) ?? wordsOf(str(call.type) ?? "tool");
  });
  return {
    key: str(payload.id),
    title: tools.length > 0 ? [...new Set(tools)].join(", ") : undefined,
    status: statusWord(payload.status) ?? statusOfName(name),
    details: undefined,
  };
}

/** An OpenAI Responses output item: tool calls (`*_call`) are steps. */
function responsesItem(name: string, payload: Json): Sighting | undefined {
  const item = payload.item;
  if (!isObject(item) || typeof item.type !== "string" || !item.type.endsWith("_call")) {
    return undefined;
  }
  const done = name.endsWith(".done");
  return {
    key: str(item.id) ?? str(item.call_id),
    title: str(item.name) ?? wordsOf(item.type),
    status: (done ? undefined : statusWord(item.status)) ?? (done ? "complete" : "in_progress"),
    details: undefined,
  };
}

/** Keeps the steps of one stream and turns step events into whole, changed steps. */
export class RunStreamSteps {
  private readonly known = new Map<string, RunStep>();
  /** Anthropic blocks and chat tool calls are named by index; their ids, by index. */
  private readonly byIndex = new Map<string, string>();

  /**
   * Takes in a step event (`name` is its event name or payload type), appending the steps
   * it changes to `out`; true when the event was one (its fields are then not the
   * answer's). Chat chunks are only looked at: their text is still the answer's.
   */
  take(name: string, payload: Json, out: StepOut): boolean {
    if (Array.isArray(payload.choices)) {
      this.chatToolCalls(payload.choices[0], out);
      return false;
    }
    if (!isStepEventName(name)) return false;
    const sighting = this.read(name, payload);
    if (sighting) this.see(sighting, out);
    return true;
  }

  private read(name: string, payload: Json): Sighting | undefined {
    if (ITEM_NAMES.has(name)) return responsesItem(name, payload);
    if (BLOCK_NAMES.has(name)) return this.block(name, payload);
    if (name.startsWith("thread.run.step") || payload.object === "thread.run.step") {
      return assistantsStep(name, payload);
    }
    return generic(name, payload);
  }

  private block(name: string, payload: Json): Sighting | undefined {
    const index = `block:${String(payload.index)}`;
    if (name === "content_block_stop") {
      const key = this.byIndex.get(index);
      return key ? { key, title: undefined, status: "complete", details: undefined } : undefined;
    }
    const block = payload.content_block;
    if (!isObject(block) || !TOOL_BLOCKS.has(String(block.type))) return undefined;
    const key = str(block.id) ?? index;
    this.byIndex.set(index, key);
    return { key, title: str(block.name), status: "in_progress", details: undefined };
  }

  private chatToolCalls(choice: unknown, out: StepOut): void {
    if (!isObject(choice)) return;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const calls = Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObject) : [];
    for (const call of calls) {
      const fn = isObject(call.function) ? call.function : {};
      const key = str(call.id);
      if (key === undefined || str(fn.name) === undefined) continue;
      this.byIndex.set(`call:${String(call.index)}`, key);
      this.see({ key, title: str(fn.name), status: "in_progress", details: undefined }, out);
    }
    if (choice.finish_reason === null || choice.finish_reason === undefined) return;
    for (const [index, key] of this.byIndex) {
      if (!index.startsWith("call:")) continue;
      this.see({ key, title: undefined, status: "complete", details: undefined }, out);
    }
  }

  private see(sighting: Sighting, out: StepOut): void {
    const { key } = sighting;
    if (key === undefined) return;
    const id = key.slice(0, MAX_TITLE);
    const before = this.known.get(id);
    if (!before && this.known.size >= MAX_STEPS) return;
    const title = sighting.title ? oneLine(sighting.title, MAX_TITLE) : before?.title;
    if (title === undefined) return;
    const details = sighting.details ? oneLine(sighting.details, MAX_DETAILS) : before?.details;
    const step: RunStep = { id, title, status: sighting.status };
    if (details !== undefined) step.details = details;
    if (before && JSON.stringify(before) === JSON.stringify(step)) return;
    this.known.set(id, step);
    out.push({ type: "step", step });
  }
}

/** Whitespace runs as one space, cut to `max` characters with "…" (never inside a pair). */
function oneLine(text: string, max: number): string {
  // Only the start can be shown: a huge field is not scanned whole.
  const flat = text
    .slice(0, max * 2)
    .replace(/\s+/gu, " ")
    .trim();
  if (flat.length <= max) return flat;
  let end = max - 1;
  const high = flat.charCodeAt(end - 1);
  if (high >= 0xd800 && high <= 0xdbff) end--;
  return `${flat.slice(0, end)}…`;
}
