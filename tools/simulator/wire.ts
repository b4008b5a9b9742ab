import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

/**
 * The HTTP edge of the simulator: bodies in, JSON and errors out. Every error body has
 * one shape, `{"error":{"type":"…","message":"…"}}`, with the type derived from the status.
 */

export type ErrorType =
  | "invalid_request"
  | "authentication"
  | "not_found"
  | "rate_limited"
  | "server_error";

export function errorTypeFor(status: number): ErrorType {
  if (status === 401 || status === 403) return "authentication";
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server_error";
  return "invalid_request";
}

/** Thrown by route handlers; the server answers it as a JSON error. */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  constructor(status: number, message: string, headers: OutgoingHttpHeaders = {}) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.headers = headers;
  }
}

export function errorBody(status: number, message: string): unknown {
  return { error: { type: errorTypeFor(status), message } };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** Default 1 MiB: larger request bodies are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req) {
    const buffer = part as Buffer;
    size += buffer.length;
    if (size > maxBytes) throw new HttpError(413, `request body larger than ${maxBytes} bytes`);
    parts.push(buffer);
  }
  return Buffer.concat(parts).toString("utf8");
}

/** The body as recorded for tests: parsed JSON when it is JSON, else the raw text. */
export function recordedBody(raw: string): unknown {
  if (raw === "") return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** POST bodies must be JSON objects (not arrays, strings or nothing). */
export function jsonObject(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new HttpError(400, "the request body must be a JSON object");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "the request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/** The bearer token of `Authorization: Bearer <t>`, or undefined when absent or empty. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S.*)$/iu.exec(header ?? "");
  const token = match?.[1]?.trim();
  return token === undefined || token === "" ? undefined : token;
}

/** First value of each query parameter. */
export function queryRecord(params: URLSearchParams): Record<string, string> {
  const seen = new Set<string>();
  const entries: [string, string][] = [];
  for (const [key, value] of params) {
    if (seen.has(key)) continue;
    seen.add(key);
    entries.push([key, value]);
  }
  // fromEntries defines own properties, so a key like "__proto__" stays plain data.
  return Object.fromEntries(entries);
}
