/**
 * One small error hierarchy for everything the service client can fail with.
 * Every error carries the request's method and path (never its query's secrets or
 * headers) so a log line says which call failed.
 */

export type ServiceErrorKind =
  | "authentication"
  | "not_found"
  | "bad_request"
  | "rate_limited"
  | "server"
  | "connection"
  | "timeout"
  | "protocol"
  | "canceled";

export interface RequestInfo {
  readonly method: string;
  /** The request path without the base URL, e.g. `/v1/run/…`. */
  readonly path: string;
}

export class ServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly method: string;
  readonly path: string;
  /** HTTP status, when a response was received. */
  readonly status: number | undefined;

  constructor(
    kind: ServiceErrorKind,
    message: string,
    request: RequestInfo,
    status?: number,
    options?: { cause?: unknown },
  ) {
    super(
      `${message} (${request.method} ${request.path}${status ? `, HTTP ${status}` : ""})`,
      options,
    );
    this.name = new.target.name;
    this.kind = kind;
    this.method = request.method;
    this.path = request.path;
    this.status = status;
  }
}

/** 401/403: the token is missing, wrong or not allowed. */
export class AuthenticationError extends ServiceError {
  constructor(message: string, request: RequestInfo, status: number) {
    super("authentication", message, request, status);
  }
}

/**
 * A person's own token cannot be used: none is linked where one is required (`not_linked`,
 * nothing was sent), or the service refused it (a 401): confirmed and forgotten (`refused`),
 * or not confirmed and kept (`refused_kept`). The shared token is never sent in its place.
 */
export class PersonalTokenError extends ServiceError {
  readonly personal = true;
  constructor(
    readonly reason: PersonalTokenProblem,
    request: RequestInfo,
    status?: number,
  ) {
    super("authentication", PERSONAL_TOKEN_PROBLEMS[reason], request, status);
  }
}

/**
 * Why a person's own token did not carry a request: none linked where one is required; the
 * service refused it and, asked again, confirmed it (it is forgotten); or the service refused
 * it but the refusal was not confirmed (it stays linked).
 */
export type PersonalTokenProblem = "not_linked" | "refused" | "refused_kept";

const PERSONAL_TOKEN_PROBLEMS: Record<PersonalTokenProblem, string> = {
  not_linked: "the person has no token linked",
  refused: "the service refused the person's own token, confirmed; it is forgotten",
  refused_kept: "the service refused the person's own token, not confirmed; it stays linked",
};

/**
 * Why a person may not continue a conversation: its service thread belongs to another
 * person's token (`another_person`), to their own token, which is no longer linked
 * (`owner_unlinked`), or to the shared token, which `personal` mode never sends for a person
 * (`shared_unused`).
 */
export type NotOwnerReason = "another_person" | "owner_unlinked" | "shared_unused";

/**
 * The service keeps a thread for the token that created it (another token gets a 404), and
 * this person may not send with that token: nothing was sent.
 */
export class ThreadOwnerError extends ServiceError {
  constructor(
    readonly reason: NotOwnerReason,
    /** Whose the thread is: a person's Slack id, or "shared". */
    readonly threadOwner: string,
    request: RequestInfo,
  ) {
    super("authentication", `the service thread belongs to another identity (${reason})`, request);
  }
}

export class NotFoundError extends ServiceError {
  constructor(message: string, request: RequestInfo, status = 404) {
    super("not_found", message, request, status);
  }
}

/** 400/409/422 and other 4xx the client cannot fix by retrying. */
export class BadRequestError extends ServiceError {
  constructor(message: string, request: RequestInfo, status: number) {
    super("bad_request", message, request, status);
  }
}

export class RateLimitedError extends ServiceError {
  /** Seconds the service asked us to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;
  constructor(message: string, request: RequestInfo, retryAfter: number | undefined) {
    super("rate_limited", message, request, 429);
    this.retryAfter = retryAfter;
  }
}

export class ServerError extends ServiceError {
  constructor(message: string, request: RequestInfo, status: number) {
    super("server", message, request, status);
  }
}

/**
 * The connection failed. `sent` tells whether any of the request may have reached the
 * service: false only when the connection was refused or never established, which is
 * what makes a POST safe to retry.
 */
export class ConnectionError extends ServiceError {
  readonly sent: boolean;
  constructor(message: string, request: RequestInfo, sent: boolean, cause?: unknown) {
    super("connection", message, request, undefined, { cause });
    this.sent = sent;
  }
}

export class TimeoutError extends ServiceError {
  constructor(message: string, request: RequestInfo, cause?: unknown) {
    super("timeout", message, request, undefined, { cause });
  }
}

/** The service answered something the interface does not allow (bad JSON, wrong shape). */
export class ProtocolError extends ServiceError {
  constructor(message: string, request: RequestInfo, status?: number, cause?: unknown) {
    super("protocol", message, request, status, { cause });
  }
}

/** The caller aborted (its AbortSignal fired), left the budget queue, or refused to send (onSend). */
export class CanceledError extends ServiceError {
  constructor(message: string, request: RequestInfo, cause?: unknown) {
    super("canceled", message, request, undefined, cause === undefined ? undefined : { cause });
  }
}

/** Response headers as undici gives them (or a fetch `Headers`). */
export type ResponseHeaders =
  | Headers
  | Readonly<Record<string, string | readonly string[] | undefined>>;

function headerValue(headers: ResponseHeaders | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? headers[name.toLowerCase()];
  return typeof value === "string" ? value : value?.[0];
}

/**
 * `Retry-After` in seconds: either delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * Undefined when absent or unreadable, so the caller falls back to its own backoff.
 */
export function parseRetryAfter(
  headers: ResponseHeaders | undefined,
  now: number = Date.now(),
): number | undefined {
  const raw = headerValue(headers, "retry-after")?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw);
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - now) / 1000);
}

const MAX_MESSAGE_CHARS = 300;

/** The service's own explanation, from the JSON error body shapes services commonly use. */
function serviceMessage(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const error = record.error;
  const candidates = [
    typeof error === "object" && error !== null
      ? (error as Record<string, unknown>).message
      : error,
    record.message,
    record.detail,
  ];
  const found = candidates.find((c): c is string => typeof c === "string" && c.trim() !== "");
  return found === undefined ? undefined : found.trim().slice(0, MAX_MESSAGE_CHARS);
}

/**
 * The one place that maps a non-success HTTP status to an error class. `body` is the
 * response body already parsed as JSON when it was JSON (otherwise its text, which is
 * never copied into the message: it may be an HTML error page).
 */
export function errorForResponse(
  status: number,
  body: unknown,
  request: RequestInfo,
  headers?: ResponseHeaders,
  now: number = Date.now(),
): ServiceError {
  const said = serviceMessage(body);
  if (status === 401 || status === 403) {
    return new AuthenticationError(said ?? "the service refused the token", request, status);
  }
  if (status === 404) return new NotFoundError(said ?? "not found", request, status);
  if (status === 429) {
    return new RateLimitedError(
      said ?? "rate limited by the service",
      request,
      parseRetryAfter(headers, now),
    );
  }
  if (status >= 500 && status <= 599) {
    return new ServerError(said ?? "the service failed", request, status);
  }
  if (status >= 400 && status <= 499) {
    return new BadRequestError(said ?? "the service refused the request", request, status);
  }
  return new ProtocolError(`unexpected HTTP status ${status}`, request, status);
}
