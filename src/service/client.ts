import type { z } from "zod";
import type { BudgetKind } from "../budgets/service/budget.js";
import { type Clock, systemClock } from "../time.js";
import {
  type ChatCompletionChunk,
  type ChatCompletionRequest,
  createChatCompletion,
  type QueuedChatCompletion,
  streamChatCompletion,
} from "./chat-completions.js";
import type { CallFor } from "./credential.js";
import { BadRequestError, ProtocolError, type RequestInfo } from "./errors.js";
import { ServiceHttp } from "./http/http.js";
import { parseBody } from "./http/http-body.js";
import type { HttpOptions } from "./http/http-options.js";
import { type CallOptions, requestInfo, type ServiceRequest } from "./http/http-request.js";
import {
  collectPages,
  type ListPage,
  oldestFirst,
  type PagingOptions,
  readListPage,
} from "./paging.js";
import { type RunStreamUpdate, readRunStream } from "./run-stream.js";
import {
  type Message,
  MessageSchema,
  type Run,
  RunSchema,
  RunSettingsSchema,
  type RunStartBody,
  type Thread,
  ThreadSchema,
} from "./schemas.js";

export type { CallOptions, QueueInfo } from "./http/http-request.js";
export type { ChatCompletionChunk, ChatCompletionRequest, QueuedChatCompletion, RunStreamUpdate };

export interface ServiceClientOptions extends HttpOptions {
  /** Default 60_000 ms: a run stream silent this long (keep-alives count) ends with "idle". */
  streamIdleTimeoutMs?: number;
  /** Paging of GET /v1/thread/{id}/messages and GET /v1/threads (defaults in PagingOptions). */
  messagePaging?: PagingOptions;
  /** Default "assistantId": the query parameter filtering GET /v1/threads by assistant. */
  threadFilterParam?: string;
}

export interface ListOptions extends CallOptions {
  /** Pages read at most by this call; default `messagePaging.maxPages`. */
  maxPages?: number;
}

/** One method per endpoint of the Assistant Conversation Service interface (§4). */
export class ServiceClient {
  readonly #http: ServiceHttp;
  readonly #streamIdleTimeoutMs: number;
  readonly #paging: PagingOptions;
  readonly #threadFilterParam: string;
  readonly #clock: Clock;

  constructor(options: ServiceClientOptions) {
    const {
      streamIdleTimeoutMs = 60_000,
      messagePaging = {},
      threadFilterParam = "assistantId",
      clock = systemClock,
      ...http
    } = options;
    this.#http = new ServiceHttp({ ...http, clock });
    this.#clock = clock;
    this.#streamIdleTimeoutMs = streamIdleTimeoutMs;
    this.#paging = messagePaging;
    this.#threadFilterParam = threadFilterParam;
  }

  /** Calls for `caller` that will come within two seconds, by kind (ServiceHttp.expect). */
  expect(calls: Partial<Record<BudgetKind, number>>, caller: CallFor = {}): void {
    this.#http.expect(calls, caller);
  }

  async openThread(
    body: { assistantId: string; title?: string },
    opts?: CallOptions,
  ): Promise<Thread> {
    const payload: Record<string, string> = { assistantId: body.assistantId };
    if (body.title !== undefined) payload.title = body.title;
    return this.#post(ThreadSchema, { path: "/v1/thread", kind: "request", body: payload }, opts);
  }

  async postMessage(
    threadId: string,
    body: { content: string },
    opts?: CallOptions,
  ): Promise<Message> {
    const path = `/v1/thread/${segment(threadId)}/messages`;
    return this.#post(
      MessageSchema,
      { path, kind: "request", body: { content: body.content } },
      opts,
    );
  }

  /**
   * Starts a run; settings become top-level body fields, and only those that are set. `body`
   * may be a function: it is called when the start leaves the budget queue, so settings
   * chosen while it waited are the ones sent, and checked then. A fixed body is checked
   * before anything waits.
   */
  async startRun(
    threadId: string,
    body: RunStartBody | (() => RunStartBody | Promise<RunStartBody>),
    opts?: CallOptions,
  ): Promise<Run> {
    const path = `/v1/thread/${segment(threadId)}/runs`;
    const request = { method: "POST", path };
    const payload =
      typeof body === "function"
        ? async () => runStartPayload(await body(), request)
        : runStartPayload(body, request);
    return this.#post(RunSchema, { path, kind: "run_start", body: payload }, opts);
  }

  async getRun(runId: string, opts?: CallOptions): Promise<Run> {
    const req: ServiceRequest = {
      method: "GET",
      path: `/v1/run/${segment(runId)}`,
      kind: "request",
    };
    return parseBody(RunSchema, await this.#http.json(req, opts), requestInfo(req));
  }

  /**
   * Follows a run as server-sent events (progress only: the final text comes from getRun).
   * Opening is retried like any GET; once open, a consumer `break` closes the connection.
   */
  async *streamRun(
    runId: string,
    opts: CallOptions & { idleTimeoutMs?: number } = {},
  ): AsyncGenerator<RunStreamUpdate, void, undefined> {
    const { idleTimeoutMs = this.#streamIdleTimeoutMs, ...call } = opts;
    const req: ServiceRequest = {
      method: "GET",
      path: `/v1/run/${segment(runId)}/stream`,
      kind: "request",
    };
    // readRunStream owns the idle timeout, so undici's body timeout is off for this body.
    const stream = await this.#http.openStream(req, { ...call, bodyTimeoutMs: 0 });
    yield* readRunStream(stream.body, {
      idleTimeoutMs,
      clock: this.#clock,
      request: stream.request,
      onClose: () => stream.close(),
    });
  }

  /**
   * POST /v1/runs/{id}/stop with `{}`. The response body is not shown by the interface:
   * the run is returned when the body parses as one. Stopping twice has the effect of
   * stopping once, so unlike other POSTs this one is retried like a GET.
   */
  async stopRun(runId: string, opts?: CallOptions): Promise<Run | undefined> {
    const req: ServiceRequest = {
      method: "POST",
      path: `/v1/runs/${segment(runId)}/stop`,
      kind: "request",
      body: {},
      idempotent: true,
    };
    const res = await this.#http.send(req, opts);
    try {
      const parsed = RunSchema.safeParse(JSON.parse(res.text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** Every message of the thread, reading all pages, oldest first. */
  async listMessages(threadId: string, opts?: ListOptions): Promise<Message[]> {
    const path = `/v1/thread/${segment(threadId)}/messages`;
    const items = await this.#list(path, {}, opts);
    return oldestFirst(items).map((item) =>
      parseBody(MessageSchema, item, { method: "GET", path }),
    );
  }

  /** The threads of this token's person, optionally only those of one assistant. */
  async listThreads(filter: { assistantId?: string } = {}, opts?: ListOptions): Promise<Thread[]> {
    const path = "/v1/threads";
    const query: Record<string, string> = {};
    if (filter.assistantId !== undefined) query[this.#threadFilterParam] = filter.assistantId;
    const items = await this.#list(path, query, opts);
    return items.map((item) => parseBody(ThreadSchema, item, { method: "GET", path }));
  }

  /** stream:false — answers at once with the ids of the thread, message and run to follow. */
  createChatCompletion(
    body: ChatCompletionRequest,
    opts?: CallOptions,
  ): Promise<QueuedChatCompletion> {
    return createChatCompletion(this.#http, body, opts);
  }

  /** stream:true — the OpenAI-format chunks, ending at `[DONE]`. */
  streamChatCompletion(
    body: ChatCompletionRequest,
    opts: CallOptions & { idleTimeoutMs?: number } = {},
  ): AsyncGenerator<ChatCompletionChunk, void, undefined> {
    const { idleTimeoutMs = this.#streamIdleTimeoutMs, ...call } = opts;
    return streamChatCompletion(this.#http, body, { ...call, idleTimeoutMs });
  }

  /** Closes the default dispatcher (an injected one belongs to its owner). */
  close(): Promise<void> {
    return this.#http.close();
  }

  async #post<T>(
    schema: z.ZodType<T>,
    req: Omit<ServiceRequest, "method">,
    opts: CallOptions | undefined,
  ): Promise<T> {
    const full: ServiceRequest = { method: "POST", ...req };
    const body = await this.#http.json(full, opts);
    return parseBody(schema, body, requestInfo(full));
  }

  async #list(
    path: string,
    query: Record<string, string>,
    opts: ListOptions = {},
  ): Promise<unknown[]> {
    const { maxPages, ...call } = opts;
    const paging = maxPages === undefined ? this.#paging : { ...this.#paging, maxPages };
    const info: RequestInfo = { method: "GET", path };
    const fetchPage = async (pageQuery: Record<string, string>): Promise<ListPage> => {
      const req: ServiceRequest = { method: "GET", path, query: pageQuery, kind: "request" };
      const page = readListPage(await this.#http.json(req, call));
      if (!page) throw new ProtocolError("the response is not a list", info);
      return page;
    };
    return collectPages(fetchPage, paging, query);
  }
}

/** Ids go into the path encoded, so an odd id can never change the route. */
function segment(id: string): string {
  if (id === "") throw new TypeError("an id must not be empty");
  return encodeURIComponent(id);
}

/** The run-start body: the trigger and only the settings that are set, validated. */
function runStartPayload(
  body: RunStartBody,
  request: { method: string; path: string },
): Record<string, unknown> {
  const settings = RunSettingsSchema.safeParse({
    modelOverride: body.modelOverride,
    reasoning_effort: body.reasoning_effort,
    maxSteps: body.maxSteps,
  });
  if (!settings.success) {
    const issue = settings.error.issues[0];
    const message = `invalid run setting ${issue?.path.join(".") ?? ""}: ${issue?.message ?? ""}`;
    throw new BadRequestError(message, request, 400);
  }
  const payload: Record<string, unknown> = { triggerMessageId: body.triggerMessageId };
  for (const [name, value] of Object.entries(settings.data)) {
    if (value !== undefined) payload[name] = value;
  }
  return payload;
}
