import { NOT_INSTALLED_CODE } from "../installations/installations.js";
import { INVALID_RESPONSE_CODE } from "./web-api-responses.js";

/**
 * How a failed Slack Web API call should be handled: waited out (429), retried (server or
 * network trouble) or given up (Slack refused the request itself).
 *
 * Errors are told apart by their `code`, as @slack/web-api sets it, rather than by
 * `instanceof`, so that a second copy of the package in node_modules cannot fool us.
 */
export type CallFailure =
  | { kind: "rate_limited"; retryAfterMs: number }
  | { kind: "transient" }
  | { kind: "permanent"; reason: string };

/** A call that never went: what had to be recorded before it could not be (post-once.ts). */
export const NOT_SENT_CODE = "slack_bridge_not_sent";

/** Used when a 429 carries no usable Retry-After, ms. */
const DEFAULT_RETRY_AFTER_MS = 1_000;

/**
 * Platform errors (HTTP 200, `ok: false`) that say "try again later". Every other platform
 * error (`message_not_found`, `msg_too_long`, `invalid_blocks`, `channel_not_found`,
 * `not_in_channel`, `is_archived`, `invalid_auth`, …) is a statement about the request or
 * the token that retrying cannot change.
 */
const TRANSIENT_PLATFORM_ERRORS = new Set([
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
]);

export function classifyCallFailure(error: unknown): CallFailure {
  if (typeof error !== "object" || error === null) return { kind: "transient" };
  const e = error as {
    code?: unknown;
    retryAfter?: unknown;
    data?: { error?: unknown };
    statusCode?: unknown;
    headers?: Record<string, unknown>;
  };
  switch (e.code) {
    case "slack_webapi_rate_limited_error":
      // The Web API client reports Retry-After in seconds.
      return { kind: "rate_limited", retryAfterMs: secondsToMs(e.retryAfter) };
    case "slack_webapi_platform_error": {
      const reason = typeof e.data?.error === "string" ? e.data.error : "unknown_error";
      if (reason === "ratelimited")
        return { kind: "rate_limited", retryAfterMs: DEFAULT_RETRY_AFTER_MS };
      return TRANSIENT_PLATFORM_ERRORS.has(reason)
        ? { kind: "transient" }
        : { kind: "permanent", reason };
    }
    case "slack_webapi_http_error": {
      const status = typeof e.statusCode === "number" ? e.statusCode : 0;
      if (status === 429) {
        return { kind: "rate_limited", retryAfterMs: secondsToMs(e.headers?.["retry-after"]) };
      }
      if (status >= 500 || status === 408) return { kind: "transient" };
      return { kind: "permanent", reason: `http_${status}` };
    }
    case "slack_webapi_request_error":
      return { kind: "transient" };
    case NOT_INSTALLED_CODE:
      // The workspace removed the app: no call there can succeed until it is installed again.
      return { kind: "permanent", reason: "not_installed" };
    case INVALID_RESPONSE_CODE:
      // Slack took the call (a post may exist): sending it again could do it twice.
      return { kind: "permanent", reason: "invalid_response" };
    case NOT_SENT_CODE:
      // Nothing reached Slack, and what it waited for failed: trying again changes nothing.
      return { kind: "permanent", reason: "not_sent" };
    default:
      // Anything else (a socket reset thrown raw, a timeout) is treated as the network's fault.
      return { kind: "transient" };
  }
}

function secondsToMs(value: unknown): number {
  const seconds = typeof value === "string" ? Number(value) : value;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) {
    return DEFAULT_RETRY_AFTER_MS;
  }
  return Math.ceil(seconds * 1_000);
}
