import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { Agent, type Dispatcher } from "undici";
import type { z } from "zod";
import { type Clock, systemClock } from "../time.js";
import { BudgetCanceled, type BudgetKind, type BudgetTicket, ServiceBudget } from "./budget.js";
import {
  CanceledError,
  errorForResponse,
  ProtocolError,
  RateLimitedError,
  type RequestInfo,
} from "./errors.js";
import { toServiceError } from "./failure.js";
import { mayRetry, type RetryTiming, retryDelayMs } from "./retry-policy.js";

/**
 * The request core of the service client: URL building, headers, timeouts, the budget,
 * error mapping and the retry loop. Endpoint knowledge lives in client.ts.
 */

/** What the client needs of a budget; a `ServiceBudget` shared by every caller in production. */
export type ClientBudget = Pick<ServiceBudget, "take" | "pauseUntil">;

export interface HttpOptions {
  /** The service's {base_url}; requests go to `<baseUrl>/v1/...`. */
  baseUrl: string;
  /** Bearer token. Never logged and never part of an error message. */
  token: string;
  /** Shared scheduler of the service's rate limits. Default: a private one with the interface's limits. */
  budget?: ClientBudget;
  /** undici dispatcher. Default: an Agent built from the timeouts below (closed by `close()`). */
  dispatcher?: Dispatcher;
  /** Default 5_000 ms: establishing the TCP connection. Only used for the default dispatcher. */
  connectTimeoutMs?: number;
  /** Default 30_000 ms: from sending the request to the response headers. */
  headersTimeoutMs?: number;
  /** Default 30_000 ms: longest pause between two chunks of a JSON response body. */
  bodyTimeoutMs?: number;
  /** Default 4: retries after the first attempt (so at most 5 requests). */
  maxRetries?: number;
  /** Default 500 ms: full-jitter exponential backoff base. */
  retryBaseDelayMs?: number;
  /** Default 15_000 ms: cap of one backoff delay (a `Retry-After` is honoured even when longer). */
  retryMaxDelayMs?: number;
  /**
   * Default the system clock: the waits between retries, and the time of a Retry-After.
   * Must be the budget's clock (`pauseUntil` is given in its time).
   */
  clock?: Clock;
  /** Default Math.random: the backoff jitter, in [0, 1). */
  random?: () => number;
  /** Called on every 429 the service answers (for metrics); default none. */
  onRateLimited?: (error: RateLimitedError) => void;
}

export interface QueueInfo {
  position: number;
  expectedWaitMs: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Fairness key for the budget (a Slack person): parties are served round-robin. */
  party?: string;
  /** Called while the call waits in the budget: first when it has to wait, then on changes. */
  onQueued?: (p: QueueInfo) => void;
}

export interface ServiceRequest {
  method: "GET" | "POST";
  /** Path under the base URL, ids already encoded, e.g. `/v1/run/<id>`. */
  path: string;
  query?: Readonly<Record<string, string>>;
  /**
   * Serialised as JSON (POST only). A function is called when the request is about to be
   * sent, after its wait in the budget, so the body says what holds at that moment.
   */
  body?: unknown;
  kind: BudgetKind;
  /** Sending it twice has the effect of sending it once (every GET is). */
  idempotent?: boolean;
}

export interface ServiceResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The whole body as text. */
  text: string;
}

export interface OpenedStream {
  body: AsyncIterable<Uint8Array>;
  headers: IncomingHttpHeaders;
  request: RequestInfo;
  /** Aborts the request (closes the connection); safe to call more than once. */
  close(): void;
}

export interface StreamCallOptions extends CallOptions {
  accept?: string;
  /** Longest pause between body chunks before undici fails the body; 0 disables it. */
  bodyTimeoutMs?: number;
}

/** A 429 without Retry-After still pauses the budget this long, ms: never a hot retry loop. */
const MIN_RATE_LIMIT_PAUSE_MS = 1_000;
/** A JSON body larger than this is refused: no response of the interface comes close. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Error bodies are only read for their message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class ServiceHttp {
  readonly #origin: string;
  readonly #basePath: string;
  readonly #authorization: string;
  /** The budget's user: a fingerprint of the token, so snapshots and logs never carry it. */
  readonly #user: string;
  readonly #budget: ClientBudget;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #headersTimeoutMs: number;
  readonly #bodyTimeoutMs: number;
  readonly #maxRetries: number;
  readonly #retryTiming: RetryTiming;
  readonly #clock: Clock;
  readonly #onRateLimited: ((error: RateLimitedError) => void) | undefined;

  constructor(options: HttpOptions) {
    const {
      connectTimeoutMs = 5_000,
      headersTimeoutMs = 30_000,
      bodyTimeoutMs = 30_000,
      maxRetries = 4,
      retryBaseDelayMs = 500,
      retryMaxDelayMs = 15_000,
      clock = systemClock,
    } = options;
    const url = new URL(options.baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`the service base URL must be http(s), not ${url.protocol}`);
    }
    if (!options.token) throw new TypeError("the service token is empty");
    this.#origin = url.origin;
    this.#basePath = url.pathname.replace(/\/+$/, "");
    this.#authorization = `Bearer ${options.token}`;
    this.#user = `token:${createHash("sha256").update(options.token).digest("hex").slice(0, 12)}`;
    this.#budget = options.budget ?? new ServiceBudget({ clock });
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({
        connect: { timeout: connectTimeoutMs },
        headersTimeout: headersTimeoutMs,
        bodyTimeout: bodyTimeoutMs,
      });
    this.#headersTimeoutMs = headersTimeoutMs;
    this.#bodyTimeoutMs = bodyTimeoutMs;
    this.#maxRetries = maxRetries;
    this.#retryTiming = {
      baseDelayMs: retryBaseDelayMs,
      maxDelayMs: retryMaxDelayMs,
      random: options.random ?? Math.random,
    };
    this.#clock = clock;
    this.#onRateLimited = options.onRateLimited;
  }

  /** Sends the request (with retries) and reads the whole success body as text. */
  send(req: ServiceRequest, opts: CallOptions = {}): Promise<ServiceResponse> {
    return this.#withRetries(req, opts, async (signal, ticket) => {
      const res = await this.#dispatch(req, signal, "application/json", this.#bodyTimeoutMs);
      try {
        if (res.statusCode < 200 || res.statusCode > 299) await this.#throwForStatus(req, res);
        const text = await readText(res.body, MAX_BODY_BYTES, requestInfo(req));
        return { status: res.statusCode, headers: res.headers, text };
      } finally {
        ticket.release();
      }
    });
  }

  /** Like `send`, then parses the body as JSON (a ProtocolError when it is not). */
  async json(req: ServiceRequest, opts: CallOptions = {}): Promise<unknown> {
    const res = await this.send(req, opts);
    try {
      return JSON.parse(res.text);
    } catch (cause) {
      throw new ProtocolError("the response body is not JSON", requestInfo(req), res.status, cause);
    }
  }

  /**
   * Opens a streamed response. Retries happen only until the headers arrive: a stream
   * that has started is never replayed. The budget slot is released at the headers.
   */
  openStream(req: ServiceRequest, opts: StreamCallOptions = {}): Promise<OpenedStream> {
    return this.#withRetries(req, opts, async (signal, ticket, controller) => {
      const accept = opts.accept ?? "text/event-stream";
      const bodyTimeout = opts.bodyTimeoutMs ?? 0;
      try {
        const res = await this.#dispatch(req, signal, accept, bodyTimeout);
        if (res.statusCode < 200 || res.statusCode > 299) await this.#throwForStatus(req, res);
        return {
          body: res.body,
          headers: res.headers,
          request: requestInfo(req),
          close: () => controller.abort(),
        };
      } finally {
        ticket.release();
      }
    });
  }

  /** Closes the dispatcher when this core created it. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  async #withRetries<T>(
    req: ServiceRequest,
    opts: CallOptions,
    attempt: (signal: AbortSignal, ticket: BudgetTicket, controller: AbortController) => Promise<T>,
  ): Promise<T> {
    const info = requestInfo(req);
    for (let retry = 0; ; retry++) {
      if (opts.signal?.aborted) throw new CanceledError("canceled by the caller", info);
      const controller = new AbortController();
      const signal = opts.signal
        ? AbortSignal.any([opts.signal, controller.signal])
        : controller.signal;
      let ticket: BudgetTicket | undefined;
      try {
        ticket = this.#budget.take(this.#user, req.kind, takeOptions(opts));
        await waitForTurn(ticket, opts, info);
        return await attempt(signal, ticket, controller);
      } catch (err) {
        ticket?.cancel();
        const error = toServiceError(err, info, opts.signal);
        const delayMs = retryDelayMs(error, retry, this.#retryTiming);
        if (error instanceof RateLimitedError) {
          this.#reportRateLimited(error);
          // Everyone sharing the budget waits too, this call's own retry included (here or
          // by its caller): the service would refuse them as well.
          const pauseMs = error.retryAfter !== undefined ? delayMs : MIN_RATE_LIMIT_PAUSE_MS;
          this.#budget.pauseUntil(this.#user, req.kind, this.#clock.now() + pauseMs);
        }
        if (retry >= this.#maxRetries || !mayRetry(error, req)) throw error;
        if (error instanceof RateLimitedError) reportQueued(opts, delayMs);
        try {
          await this.#clock.sleep(delayMs, opts.signal);
        } catch {
          throw new CanceledError("canceled by the caller while waiting to retry", info);
        }
      }
    }
  }

  #reportRateLimited(error: RateLimitedError): void {
    try {
      this.#onRateLimited?.(error);
    } catch {
      // An observer's failure must not change the outcome of the request.
    }
  }

  #dispatch(
    req: ServiceRequest,
    signal: AbortSignal,
    accept: string,
    bodyTimeout: number,
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = { authorization: this.#authorization, accept };
    let body: string | undefined;
    const value: unknown = typeof req.body === "function" ? req.body() : req.body;
    if (value !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(value);
    }
    const query = req.query ? new URLSearchParams(req.query).toString() : "";
    return this.#dispatcher.request({
      origin: this.#origin,
      path: `${this.#basePath}${req.path}${query ? `?${query}` : ""}`,
      method: req.method,
      headers,
      body: body ?? null,
      signal,
      headersTimeout: this.#headersTimeoutMs,
      bodyTimeout,
    });
  }

  async #throwForStatus(req: ServiceRequest, res: Dispatcher.ResponseData): Promise<never> {
    let body: unknown;
    try {
      const text = await readText(res.body, MAX_ERROR_BODY_BYTES, requestInfo(req));
      body = parseJsonOr(text);
    } catch {
      // The status alone decides the error class; the body only adds a message.
    }
    throw errorForResponse(res.statusCode, body, requestInfo(req), res.headers, this.#clock.now());
  }
}

function takeOptions(opts: CallOptions): { party?: string; signal?: AbortSignal } {
  const out: { party?: string; signal?: AbortSignal } = {};
  if (opts.party !== undefined) out.party = opts.party;
  if (opts.signal !== undefined) out.signal = opts.signal;
  return out;
}

async function waitForTurn(
  ticket: BudgetTicket,
  opts: CallOptions,
  info: RequestInfo,
): Promise<void> {
  let unsubscribe = (): void => {};
  const { onQueued } = opts;
  if (onQueued) {
    // Position 0 can still mean a wait (next in line, the window is full): report that too.
    const position = ticket.position();
    const expectedWaitMs = ticket.expectedWaitMs();
    if (position > 0 || expectedWaitMs > 0) onQueued({ position, expectedWaitMs });
    unsubscribe = ticket.onChange(onQueued);
  }
  try {
    await ticket.ready;
  } catch (err) {
    if (err instanceof BudgetCanceled) throw new CanceledError("canceled while queued", info);
    throw err;
  } finally {
    unsubscribe();
  }
}

/**
 * A 429 puts the caller back in line for `waitMs`: it is told so, like a wait in the budget,
 * so that a reply can show "queued" instead of a start that seems stuck.
 */
function reportQueued(opts: CallOptions, waitMs: number): void {
  try {
    opts.onQueued?.({ position: 0, expectedWaitMs: waitMs });
  } catch {
    // An observer's failure must not change the outcome of the request.
  }
}

export function requestInfo(req: Pick<ServiceRequest, "method" | "path">): RequestInfo {
  return { method: req.method, path: req.path };
}

async function readText(
  body: AsyncIterable<Uint8Array> & { destroy?: () => unknown },
  limit: number,
  info: RequestInfo,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      body.destroy?.();
      throw new ProtocolError(`the response body is larger than ${limit} bytes`, info);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Parses a success body with a zod schema; a wrong shape is the service's protocol error. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown, info: RequestInfo): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
  throw new ProtocolError(
    `unexpected response shape${where}: ${issue?.message ?? "invalid"}`,
    info,
  );
}
