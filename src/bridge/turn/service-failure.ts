/**
 * What the bridge needs to know of a failed service call. The service port rejects with
 * errors that carry a `kind` (service/errors.ts: ServiceError); the bridge reads only that,
 * so it does not depend on the client's classes.
 */
export type ServiceFailureKind =
  | "authentication"
  | "not_found"
  | "bad_request"
  | "rate_limited"
  | "server"
  | "connection"
  | "timeout"
  | "protocol"
  | "canceled";

const KINDS: ReadonlySet<string> = new Set<ServiceFailureKind>([
  "authentication",
  "not_found",
  "bad_request",
  "rate_limited",
  "server",
  "connection",
  "timeout",
  "protocol",
  "canceled",
]);

/** The kind of a service failure; undefined for anything else (a bug, an abort). */
export function serviceFailureKind(error: unknown): ServiceFailureKind | undefined {
  if (!(error instanceof Error)) return undefined;
  const kind = (error as { kind?: unknown }).kind;
  return typeof kind === "string" && KINDS.has(kind) ? (kind as ServiceFailureKind) : undefined;
}

/** The service is (for now) not answering, as opposed to refusing the request. */
export function isTransient(error: unknown): boolean {
  const kind = serviceFailureKind(error);
  return (
    kind === "connection" ||
    kind === "timeout" ||
    kind === "server" ||
    kind === "rate_limited" ||
    kind === "protocol"
  );
}

/**
 * A request that failed this way certainly changed nothing at the service: it was refused
 * (a 429 or another 4xx) or never left (a connection never made). Any other failure (a
 * timeout, a reset, a 5xx, a garbled answer, an abort) may come after the service acted on it.
 */
export function changedNothing(error: unknown): boolean {
  switch (serviceFailureKind(error)) {
    case "rate_limited":
    case "bad_request":
    case "authentication":
    case "not_found":
      return true;
    case "connection":
      return (error as { sent?: unknown }).sent === false;
    default:
      return false;
  }
}

/**
 * What a log line may say about an error: its kind, status and call, never payloads or
 * tokens. A refused request (`bad_request`) also gets the service's own words, which the
 * person in the channel is spared (turn-ending.ts).
 */
export function errorSummary(error: unknown): Record<string, unknown> {
  const kind = serviceFailureKind(error);
  if (kind !== undefined) {
    const { name, status, method, path, message } = error as Error & {
      status?: unknown;
      method?: unknown;
      path?: unknown;
    };
    return { type: name, kind, status, method, path, ...(kind === "bad_request" && { message }) };
  }
  if (error instanceof Error) return { type: error.name, message: error.message };
  return { type: typeof error };
}
