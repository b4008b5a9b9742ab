/**
 * How calls reach the fake over HTTP: Web API arguments from form or JSON bodies (with the
 * JSON-string fields Slack's clients send decoded), the kind of token that came (never its
 * value), and Slack-style JSON answers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Credentials } from "./installs.js";
import type { Args, TokenKind } from "./methods.js";

/** Fields Slack's clients send as JSON strings in form bodies. */
const JSON_FIELDS = [
  "blocks",
  "attachments",
  "view",
  "metadata",
  "chunks",
  "user_auth_blocks",
  "loading_messages",
  "prompts",
];

function decodeForm(raw: string): Args {
  const args: Args = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    args[key] = value;
    if (JSON_FIELDS.includes(key)) {
      try {
        args[key] = JSON.parse(value);
      } catch {
        // Left as the string it is; the method answers as Slack would (invalid_blocks_format).
      }
    }
  }
  return args;
}

/**
 * The call's arguments: query parameters, then the body (JSON or form-encoded). Undefined
 * when a JSON body is not a JSON object.
 */
export function decodeArgs(
  req: IncomingMessage,
  raw: string,
  query: URLSearchParams,
): Args | undefined {
  const args: Args = Object.fromEntries(query);
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("application/json")) {
    if (raw.trim() === "") return args;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
      return { ...args, ...(parsed as Args) };
    } catch {
      return undefined;
    }
  }
  return { ...args, ...decodeForm(raw) };
}

/**
 * The token in the Authorization header (Bearer) or, failing that, the `token` field; kept
 * only long enough to route the call to its workspace.
 */
export function tokenOf(req: IncomingMessage, args: Args): string | undefined {
  const header = req.headers.authorization ?? "";
  const fromHeader = header.startsWith("Bearer ") ? header.slice("Bearer ".length).trim() : "";
  const token = fromHeader !== "" ? fromHeader : typeof args.token === "string" ? args.token : "";
  return token === "" ? undefined : token;
}

/** The kind of a token (never its value). */
export function tokenKind(token: string | undefined): TokenKind {
  if (token === undefined) return "none";
  return token.startsWith("xapp-") ? "app" : "other";
}

/** Client credentials sent as `Authorization: Basic` (oauth.v2.access takes them so too). */
export function basicCredentials(req: IncomingMessage): Credentials | undefined {
  const header = req.headers.authorization ?? "";
  if (!header.startsWith("Basic ")) return undefined;
  const decoded = Buffer.from(header.slice("Basic ".length).trim(), "base64").toString("utf8");
  const at = decoded.indexOf(":");
  return at < 0 ? undefined : { id: decoded.slice(0, at), secret: decoded.slice(at + 1) };
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}
