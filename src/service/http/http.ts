import type { Readable } from "node:stream";
import { Agent, type Dispatcher } from "undici";
import { type BudgetKind, type BudgetTicket, ServiceBudget } from "../../budgets/service/budget.js";
import { reportQueued, takeOptions, waitForTurn } from "../../budgets/service/budget-wait.js";
import { type Clock, systemClock } from "../../time.js";
import {
  budgetUser,
  type CallFor,
  type Credential,
  type CredentialSource,
  type RefusalOutcome,
  sharedCredential,
} from "../credential.js";
import {
  AuthenticationError,
  CanceledError,
  errorForResponse,
  PersonalTokenError,
  ProtocolError,
  RateLimitedError,
  type ServiceError,
} from "../errors.js";
import { toServiceError } from "../failure.js";
import { parseJsonOr, readText } from "./http-body.js";
import type { ClientBudget, HttpOptions, ServiceRequestEntry } from "./http-options.js";
import {
  type CallOptions,
  type OpenedStream,
  requestInfo,
  type ServiceRequest,
  type ServiceResponse,
  type StreamCallOptions,
} from "./http-request.js";
import { NotWritten, writing } from "./on-write.js";
import { mayRetry, type RetryTiming, retryDelayMs } from "./retry-policy.js";

/**
 * The request core of the service client: URL building, headers, timeouts, the budget,
 * error mapping and the retry loop. Endpoint knowledge lives in client.ts.
 */

/** A 429 without Retry-After still pauses the budget this long, ms: never a hot retry loop. */
const MIN_RATE_LIMIT_PAUSE_MS = 1_000;
/** A JSON body larger than this is refused: no response of the interface comes close. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Error bodies are only read for their message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class ServiceHttp {
  readonly #origin: string;
  readonly #basePath: string;
  /** Which token each call carries; asked per attempt (credential.ts). */
  readonly #credentials: CredentialSource;
  readonly #onRequest: ((entry: ServiceRequestEntry) => void) | undefined;
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
    this.#credentials = options.credentials ?? sharedCredential(options.token);
    this.#onRequest = options.onRequest;
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
    return this.#withRetries(req, opts, async (signal, ticket, _controller, credential) => {
      const res = await this.#dispatch(
        req,
        opts,
        signal,
        "application/json",
        this.#bodyTimeoutMs,
        credential,
      );
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
    return this.#withRetries(req, opts, async (signal, ticket, controller, credential) => {
      const accept = opts.accept ?? "text/event-stream";
      const bodyTimeout = opts.bodyTimeoutMs ?? 0;
      try {
        const res = await this.#dispatch(req, opts, signal, accept, bodyTimeout, credential);
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

  /**
   * Calls for `caller` that will come within two seconds (a turn just accepted), by kind: the
   * budget takes their slots ahead where it keeps them in a database, so that each finds its
   * slot in hand. Nothing is sent. Only for a credential known at once (the shared token):
   * finding a person's own would read the store, and could tell them to link one.
   */
  expect(calls: Partial<Record<BudgetKind, number>>, caller: CallFor): void {
    const credential = this.#credentials.known?.(caller);
    if (!credential || !this.#budget.expect) return;
    const user = budgetUser(credential.token);
    for (const [kind, count] of Object.entries(calls) as [BudgetKind, number][]) {
      this.#budget.expect(user, kind, count);
    }
  }

  /** Closes the dispatcher when this core created it. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  async #withRetries<T>(
    req: ServiceRequest,
    opts: CallOptions,
    attempt: (
      signal: AbortSignal,
      ticket: BudgetTicket,
      controller: AbortController,
      credential: Credential,
    ) => Promise<T>,
  ): Promise<T> {
    const info = requestInfo(req);
    for (let retry = 0; ; retry++) {
      if (opts.signal?.aborted) throw new CanceledError("canceled by the caller", info);
      const controller = new AbortController();
      const signal = opts.signal
        ? AbortSignal.any([opts.signal, controller.signal])
        : controller.signal;
      let ticket: BudgetTicket | undefined;
      let credential: Credential | undefined;
      try {
        ({ ticket, credential } = await this.#admit(req, opts));
        const result = await attempt(signal, ticket, controller, credential);
        this.#report(credential, req, "ok");
        return result;
      } catch (err) {
        ticket?.cancel();
        const error = await this.#personal(toServiceError(err, info, opts.signal), credential);
        if (credential) this.#report(credential, req, error.status ?? error.kind);
        const delayMs = retryDelayMs(error, retry, this.#retryTiming);
        if (error instanceof RateLimitedError) {
          this.#reportRateLimited(error);
          // Everyone sharing the budget waits too, this call's own retry included (here or
          // by its caller): the service would refuse them as well.
          const pauseMs = error.retryAfter !== undefined ? delayMs : MIN_RATE_LIMIT_PAUSE_MS;
          const user = budgetUser((credential as Credential).token);
          this.#budget.pauseUntil(user, req.kind, this.#clock.now() + pauseMs);
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

  /**
   * The call's credential and its turn in that token's budget. The credential is read again
   * once the turn has come: a token unlinked (or linked) while the call waited is not the
   * one sent, and the call queues again in the budget of the token it will carry.
   */
  async #admit(
    req: ServiceRequest,
    opts: CallOptions,
  ): Promise<{ ticket: BudgetTicket; credential: Credential }> {
    const info = requestInfo(req);
    const read = () => opts.credential ?? this.#credentials.resolve(opts, info);
    // Taken at once when the source answers at once: the ticket joins the queue in call order.
    const first = read();
    let credential = first instanceof Promise ? await first : first;
    for (;;) {
      const ticket = this.#budget.take(budgetUser(credential.token), req.kind, takeOptions(opts));
      let current: Credential;
      try {
        await waitForTurn(ticket, opts, info);
        current = await read();
      } catch (error) {
        ticket.cancel();
        throw error;
      }
      if (current.token === credential.token) return { ticket, credential: current };
      ticket.cancel();
      credential = current;
    }
  }

  /**
   * A 401 to a person's own token: the credential source confirms it before forgetting the
   * token (identities.ts), and the caller is told whether it did.
   */
  async #personal(error: ServiceError, credential: Credential | undefined): Promise<ServiceError> {
    if (!credential?.personal || !(error instanceof AuthenticationError) || error.status !== 401) {
      return error;
    }
    let outcome: RefusalOutcome = "kept";
    try {
      outcome = (await this.#credentials.refused?.(credential)) ?? "kept";
    } catch {
      // The refusal is still the caller's outcome; nothing was forgotten.
    }
    const reason = outcome === "forgotten" ? "refused" : "refused_kept";
    return new PersonalTokenError(reason, { method: error.method, path: error.path }, 401);
  }

  #report(credential: Credential, req: ServiceRequest, outcome: number | string): void {
    try {
      this.#onRequest?.({
        identity: credential.identity,
        method: req.method,
        path: req.path,
        outcome,
      });
    } catch {
      // An observer's failure must not change the outcome of the request.
    }
  }

  #reportRateLimited(error: RateLimitedError): void {
    try {
      this.#onRateLimited?.(error);
    } catch {
      // An observer's failure must not change the outcome of the request.
    }
  }

  async #dispatch(
    req: ServiceRequest,
    opts: CallOptions,
    signal: AbortSignal,
    accept: string,
    bodyTimeout: number,
    credential: Credential,
  ): Promise<Dispatcher.ResponseData> {
    const authorization = `Bearer ${credential.token}`;
    const headers: Record<string, string> = { authorization, accept };
    let text: string | undefined;
    const value: unknown = typeof req.body === "function" ? await req.body() : req.body;
    if (value !== undefined) {
      headers["content-type"] = "application/json";
      text = JSON.stringify(value);
    }
    const query = req.query ? new URLSearchParams(req.query).toString() : "";
    const { onSend } = opts;
    let dispatcher = this.#dispatcher;
    let body: string | Readable | null = text ?? null;
    if (onSend) {
      // Held until onSend's record is made (on-write.ts): not a byte leaves before.
      const held = writing(dispatcher, () => onSend({ identity: credential.identity }), text ?? "");
      dispatcher = held.dispatcher;
      body = held.body;
      headers["content-length"] = String(held.length);
    }
    try {
      return await dispatcher.request({
        origin: this.#origin,
        path: `${this.#basePath}${req.path}${query ? `?${query}` : ""}`,
        method: req.method,
        headers,
        body,
        signal,
        headersTimeout: this.#headersTimeoutMs,
        bodyTimeout,
      });
    } catch (error) {
      if (!(error instanceof NotWritten)) throw error;
      throw new CanceledError("not sent: the caller refused", requestInfo(req), error.cause);
    }
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
