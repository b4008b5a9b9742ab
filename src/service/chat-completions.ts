import { createParser, type EventSourceMessage } from "eventsource-parser";
import { z } from "zod";
import { BadRequestError, ProtocolError, type RequestInfo } from "./errors.js";
import { toServiceError } from "./failure.js";
import type { ServiceHttp } from "./http/http.js";
import { parseBody } from "./http/http-body.js";
import { type CallOptions, requestInfo, type ServiceRequest } from "./http/http-request.js";

/**
 * POST /v1/agents/chat/completions (interface §4, §6): one conversation turn in OpenAI
 * chat-completions format, streamed or queued.
 */

export interface ChatCompletionMessage {
  role: string;
  /** Only strings are accepted by the service; other shapes (image parts) are refused here. */
  content: string | readonly unknown[] | null;
}

export interface ChatCompletionRequest {
  /** Starts a new conversation with this assistant. */
  assistantId?: string;
  /** Continues this conversation (instead of assistantId). */
  threadId?: string;
  messages: readonly ChatCompletionMessage[];
  /** Chooses the model of this response, not the assistant. */
  model?: string;
}

/** The non-streamed answer: no text yet, but the ids to follow the run with. */
export interface QueuedChatCompletion {
  threadId: string;
  messageId: string;
  runId: string;
  /** The whole response body as parsed. */
  raw: Record<string, unknown>;
}

export const ChatCompletionChunkSchema = z.looseObject({
  id: z.string().optional(),
  object: z.string().optional(),
  model: z.string().nullish(),
  choices: z
    .array(
      z.looseObject({
        index: z.number().optional(),
        delta: z
          .looseObject({ role: z.string().nullish(), content: z.string().nullish() })
          .optional(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: z.looseObject({}).nullish(),
});
export type ChatCompletionChunk = z.infer<typeof ChatCompletionChunkSchema>;

const PATH = "/v1/agents/chat/completions";

function chatRequest(body: ChatCompletionRequest, stream: boolean): ServiceRequest {
  refuseUnsupported(body, { method: "POST", path: PATH });
  // A chat completion starts a run, so it spends the run-start budget.
  return { method: "POST", path: PATH, kind: "run_start", body: { ...body, stream } };
}

/**
 * Interface §4 rules 1-2: tool messages and images are refused. Refusing before sending
 * spares a run-start slot and gives the caller the same error class the service would.
 */
export function refuseUnsupported(body: ChatCompletionRequest, request: RequestInfo): void {
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new BadRequestError("a chat completion needs at least one message", request, 400);
  }
  body.messages.forEach((message, index) => {
    if (message.role === "tool") {
      throw new BadRequestError(`messages[${index}]: tool messages are refused`, request, 400);
    }
    if (typeof message.content !== "string") {
      throw new BadRequestError(
        `messages[${index}]: only text content is accepted (no images or content parts)`,
        request,
        400,
      );
    }
  });
}

const QueuedSchema = z.looseObject({ metadata: z.looseObject({}).nullish() });

function pickId(
  sources: readonly Record<string, unknown>[],
  names: readonly string[],
): string | undefined {
  for (const source of sources) {
    for (const name of names) {
      const value = source[name];
      if (typeof value === "string" && value !== "") return value;
    }
  }
  return undefined;
}

export async function createChatCompletion(
  http: ServiceHttp,
  body: ChatCompletionRequest,
  opts: CallOptions = {},
): Promise<QueuedChatCompletion> {
  const req = chatRequest(body, false);
  const info = requestInfo(req);
  const raw = parseBody(QueuedSchema, await http.json(req, opts), info);
  // The interface does not name the id fields: accept snake and camel case, top level or metadata.
  const sources = [raw, ...(raw.metadata ? [raw.metadata] : [])];
  const threadId = pickId(sources, ["thread_id", "threadId"]);
  const messageId = pickId(sources, ["message_id", "messageId"]);
  const runId = pickId(sources, ["run_id", "runId"]);
  if (!threadId || !messageId || !runId) {
    throw new ProtocolError("the queued chat completion lacks the thread, message or run id", info);
  }
  return { threadId, messageId, runId, raw };
}

/**
 * Streams the chunks of one completion, ending at `data: [DONE]`. The stream is never
 * retried once it has started; a consumer `break` aborts the request. `idleTimeoutMs`
 * bounds the silence between two body chunks (a TimeoutError when exceeded).
 */
export async function* streamChatCompletion(
  http: ServiceHttp,
  body: ChatCompletionRequest,
  opts: CallOptions & { idleTimeoutMs: number },
): AsyncGenerator<ChatCompletionChunk, void, undefined> {
  const req = chatRequest(body, true);
  const info = requestInfo(req);
  const { idleTimeoutMs, ...callOptions } = opts;
  const stream = await http.openStream(req, { ...callOptions, bodyTimeoutMs: idleTimeoutMs });
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  const decoder = new TextDecoder("utf-8");
  try {
    for await (const bytes of stream.body) {
      parser.feed(decoder.decode(bytes, { stream: true }));
      for (const event of events.splice(0)) {
        const data = event.data.trim();
        if (data === "") continue;
        if (data === "[DONE]") return;
        yield parseChunk(data, info);
      }
    }
  } catch (err) {
    throw toServiceError(err, info, opts.signal);
  } finally {
    stream.close();
  }
  throw new ProtocolError("the stream ended before [DONE]", info);
}

function parseChunk(data: string, info: RequestInfo): ChatCompletionChunk {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (cause) {
    throw new ProtocolError("a stream chunk is not JSON", info, undefined, cause);
  }
  const error = (json as { error?: { message?: unknown } } | null)?.error;
  if (error !== undefined && error !== null) {
    const said = typeof error.message === "string" ? `: ${error.message.slice(0, 300)}` : "";
    throw new ProtocolError(`the stream reported an error${said}`, info);
  }
  return parseBody(ChatCompletionChunkSchema, json, info);
}
