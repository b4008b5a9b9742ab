/**
 * What Slack sends to a bot's HTTP endpoint: signed requests carrying events, slash
 * commands and interactivity, so tests can drive the bot's receiver as Slack would. The
 * payload builders live in slack-events.ts and slack-interactions.ts and are re-exported.
 */
import { createHmac } from "node:crypto";
import { performance } from "node:perf_hooks";
import { eventEnvelope, type Payload } from "./slack-events.js";

export * from "./agent-events.js";
export * from "./install-events.js";
export * from "./slack-events.js";
export * from "./slack-interactions.js";

const FORM = "application/x-www-form-urlencoded";
const JSON_TYPE = "application/json";

export interface SignedHeaders {
  "x-slack-signature": string;
  "x-slack-request-timestamp": string;
  "content-type": string;
}

/**
 * Slack's v0 signature over `v0:<timestamp>:<raw body>`. The content type is JSON for a
 * body that is a JSON object, form-encoded otherwise, unless given.
 */
export function signRequest(
  secret: string,
  rawBody: string,
  timestampSec: number = Math.floor(Date.now() / 1000),
  contentType: string = rawBody.trimStart().startsWith("{") ? JSON_TYPE : FORM,
): SignedHeaders {
  const hmac = createHmac("sha256", secret).update(`v0:${timestampSec}:${rawBody}`);
  return {
    "x-slack-signature": `v0=${hmac.digest("hex")}`,
    "x-slack-request-timestamp": String(timestampSec),
    "content-type": contentType,
  };
}

export type RequestKind = "event" | "command" | "action" | "view";

export interface PostOptions {
  /** Adds `x-slack-retry-num`, as Slack does when it redelivers an event. */
  retryNum?: number;
  /** `x-slack-retry-reason`, e.g. "http_timeout". Default "http_timeout" when retryNum is set. */
  retryReason?: string;
  /** Sign with a wrong secret: the bot must refuse the request. */
  badSignature?: boolean;
  /** Request timestamp in seconds (a stale one must be refused). Default now. */
  timestamp?: number;
}

export interface BotResponse {
  status: number;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json: unknown;
  /** Time until the response headers arrived (Slack's acknowledgement time), in ms. */
  ms: number;
}

/** The raw body Slack sends for each kind, with its content type. */
function encode(kind: RequestKind, payload: Payload): { raw: string; contentType: string } {
  switch (kind) {
    case "event": {
      const envelope =
        payload.type === "event_callback" || payload.type === "url_verification"
          ? payload
          : eventEnvelope(payload);
      return { raw: JSON.stringify(envelope), contentType: JSON_TYPE };
    }
    case "command": {
      const form = new URLSearchParams();
      for (const [key, value] of Object.entries(payload)) {
        if (value !== undefined) form.set(key, String(value));
      }
      return { raw: form.toString(), contentType: FORM };
    }
    case "action":
    case "view":
      return {
        raw: new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
        contentType: FORM,
      };
  }
}

/**
 * POSTs a signed Slack request to the bot (`http://127.0.0.1:<port>/slack/events`). Events
 * that are not already an `event_callback` envelope are wrapped in one.
 */
export async function postToBot(
  url: string,
  secret: string,
  kind: RequestKind,
  payload: Payload,
  opts: PostOptions = {},
): Promise<BotResponse> {
  const { headers, raw } = signedRequest(secret, kind, payload, opts);
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers, body: raw });
  const ms = performance.now() - started;
  const body = await response.text();
  let json: unknown;
  try {
    json = body === "" ? undefined : JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: response.status, body, json, ms };
}

/** The raw body and headers of a signed Slack request, as `postToBot` sends them. */
export function signedRequest(
  secret: string,
  kind: RequestKind,
  payload: Payload,
  opts: PostOptions = {},
): { headers: Record<string, string>; raw: string } {
  const { raw, contentType } = encode(kind, payload);
  const signingSecret = opts.badSignature ? `${secret}-wrong` : secret;
  const headers: Record<string, string> = {
    ...signRequest(signingSecret, raw, opts.timestamp, contentType),
  };
  if (opts.retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(opts.retryNum);
    headers["x-slack-retry-reason"] = opts.retryReason ?? "http_timeout";
  } else if (opts.retryReason !== undefined) {
    headers["x-slack-retry-reason"] = opts.retryReason;
  }
  return { headers, raw };
}
