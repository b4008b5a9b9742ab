import { createParser } from "eventsource-parser";
import type {
  SimulatorMessage,
  SimulatorRun,
  SimulatorThread,
} from "../../../tools/simulator/server.js";

/**
 * A deliberately plain caller of the simulator for its conformance tests: `fetch` and
 * nothing else (the project's service client is not used, so these tests check the wire
 * and not the client's reading of it).
 */

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface ErrorBody {
  error: { type: string; message: string };
}

export interface ListBody<T> {
  object: string;
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface CallOptions {
  /** Bearer token; null sends no Authorization header. */
  token?: string | null;
  /** Sent as is instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export const TOKEN = "person-token";

export class ServiceFetch {
  readonly baseUrl: string;
  readonly token: string;

  constructor(baseUrl: string, token: string = TOKEN) {
    this.baseUrl = baseUrl;
    this.token = token;
  }

  /** A fetch with auth and a JSON body; the response body is JSON when it parses. */
  async call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    options: CallOptions = {},
  ): Promise<Answer<T>> {
    const response = await this.fetch(method, path, body, options);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the raw text is what the test sees.
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  fetch(method: string, path: string, body?: unknown, options: CallOptions = {}) {
    const token = options.token === undefined ? this.token : options.token;
    const headers: Record<string, string> = { ...options.headers };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const payload = options.rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    if (payload !== undefined) headers["content-type"] ??= "application/json";
    return fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(payload === undefined ? {} : { body: payload }),
    });
  }

  async createThread(assistantId = "asst-1", title?: string): Promise<SimulatorThread> {
    const body = title === undefined ? { assistantId } : { assistantId, title };
    return this.#expect<SimulatorThread>(201, "POST", "/v1/thread", body);
  }

  async postMessage(threadId: string, content: string): Promise<SimulatorMessage> {
    return this.#expect(201, "POST", `/v1/thread/${threadId}/messages`, { content });
  }

  async startRun(threadId: string, messageId: string, settings: object = {}) {
    return this.#expect<SimulatorRun>(201, "POST", `/v1/thread/${threadId}/runs`, {
      triggerMessageId: messageId,
      ...settings,
    });
  }

  /** A new thread with one message and a run started on it. */
  async ask(content: string, settings: object = {}) {
    const thread = await this.createThread();
    const message = await this.postMessage(thread.id, content);
    const run = await this.startRun(thread.id, message.id, settings);
    return { thread, message, run };
  }

  async #expect<T>(status: number, method: string, path: string, body?: unknown): Promise<T> {
    const answer = await this.call<T>(method, path, body);
    if (answer.status !== status) {
      throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    return answer.body;
  }
}

export interface SseEvent {
  event: string | undefined;
  data: string;
}

export interface SseRead {
  events: SseEvent[];
  comments: string[];
  /** "eof": the server ended the response; "error": the connection broke; "stopped": `until`. */
  ended: "eof" | "error" | "stopped";
}

/**
 * Reads a `text/event-stream` body with eventsource-parser (a spec-faithful parser)
 * until it ends, breaks, or `until` says enough (then the request is canceled).
 */
export async function readSse(
  response: Response,
  until?: (read: SseRead) => boolean,
): Promise<SseRead> {
  const read: SseRead = { events: [], comments: [], ended: "eof" };
  const parser = createParser({
    onEvent: (event) => read.events.push({ event: event.event, data: event.data }),
    onComment: (comment) => read.comments.push(comment),
  });
  if (response.body === null) return read;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      if (until?.(read)) {
        read.ended = "stopped";
        await reader.cancel();
        break;
      }
    }
  } catch {
    read.ended = "error";
  }
  return read;
}

/** The JSON payloads of the events (the `[DONE]` terminator excluded). */
export function jsonData<T = Record<string, unknown>>(read: SseRead): T[] {
  return read.events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as T);
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/u;
