import { BudgetCanceled } from "../budgets/service/budget.js";
import {
  CanceledError,
  ConnectionError,
  type RequestInfo,
  ServiceError,
  TimeoutError,
} from "./errors.js";

/**
 * Transport failures (undici and Node errors) mapped to the service error hierarchy. What
 * matters most is `ConnectionError.sent`: only a failure that certainly happened before
 * the request could leave makes a POST safe to send again.
 */

/** Connection failures that happen before a single byte of the request can have left. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
]);
const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** Maps anything an attempt threw to the service error hierarchy. */
export function toServiceError(
  err: unknown,
  info: RequestInfo,
  signal?: AbortSignal,
): ServiceError {
  if (err instanceof ServiceError) return err;
  if (signal?.aborted || err instanceof BudgetCanceled) {
    return new CanceledError("canceled by the caller", info);
  }
  const codes = errorCodes(err);
  const code = codes[0] ?? (err instanceof Error ? err.name : "unknown");
  if (codes.some((c) => TIMEOUT_CODES.has(c))) {
    return new TimeoutError(`the service did not answer in time (${code})`, info, err);
  }
  if (codes.some((c) => NOT_SENT_CODES.has(c))) {
    return new ConnectionError(`could not connect to the service (${code})`, info, false, err);
  }
  // Anything else (a reset, "other side closed", a broken pipe) may have happened after
  // the request, or part of it, reached the service.
  return new ConnectionError(`the connection to the service failed (${code})`, info, true, err);
}

/** Error codes along the cause chain (undici and Node wrap them differently). */
function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const pending: unknown[] = [err];
  for (let seen = 0; pending.length > 0 && seen < 10; seen++) {
    const next = pending.shift();
    if (typeof next !== "object" || next === null) continue;
    const { code, cause, errors } = next as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === "string") codes.push(code);
    if (cause !== undefined) pending.push(cause);
    if (Array.isArray(errors)) pending.push(...errors);
  }
  return codes;
}
