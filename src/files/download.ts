import { type Dispatcher, request } from "undici";

/**
 * Downloads a file people shared, from Slack's file host only, with the installation's bot
 * token, within a byte limit and a time limit. The token goes to no other host: a URL on
 * another host is not fetched at all, and a redirect is followed only to an allowed host
 * (a redirect elsewhere ends the download). Slack answers a download it does not allow
 * (no `files:read`, a file the bot may not see) with its sign-in page, as HTML and status
 * 200: that is taken as a refusal, not as the file.
 */

export interface DownloadOptions {
  /** Hosts (`host[:port]`, as `URL.host`) the token may be sent to: Slack's file host and SLACK_API_URL's. */
  allowedHosts: readonly string[];
  /** Largest file read, bytes; a bigger one is not read further. */
  maxBytes: number;
  /** The whole download, ms. */
  timeoutMs: number;
  /** Default undici's global dispatcher. */
  dispatcher?: Dispatcher;
  /** Aborts the download (the turn stopped). */
  signal?: AbortSignal;
  /** The file itself is HTML (its mimetype says so): an HTML answer is then the file. */
  html?: boolean;
}

/**
 * Why a file was not downloaded (files/reader.ts words it): `off_slack`, its address (or a
 * redirect) leads off the hosts the token may go to; `not_allowed`, Slack refused the bot.
 */
export type DownloadRefusal = "too_large" | "off_slack" | "not_allowed" | "failed" | "timeout";

export type Downloaded =
  | { ok: true; bytes: Buffer; contentType: string }
  | { ok: false; reason: DownloadRefusal };

/** Redirects followed at most (between Slack's own hosts). */
const MAX_REDIRECTS = 3;

export async function downloadSlackFile(
  url: string,
  token: string,
  options: DownloadOptions,
): Promise<Downloaded> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let target = url;
  try {
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      if (!allowed(target, options.allowedHosts)) return { ok: false, reason: "off_slack" };
      const response = await request(target, {
        method: "GET",
        headers: { authorization: `Bearer ${token}` },
        signal,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      });
      const location = header(response.headers.location);
      if (response.statusCode >= 300 && response.statusCode < 400 && location) {
        await response.body.dump();
        target = new URL(location, target).toString();
        continue;
      }
      if (response.statusCode !== 200) {
        await response.body.dump();
        return { ok: false, reason: response.statusCode === 403 ? "not_allowed" : "failed" };
      }
      return await readLimited(response, options.maxBytes, options.html === true);
    }
    return { ok: false, reason: "failed" };
  } catch {
    // The error may name the URL; neither it nor the token is passed on.
    return { ok: false, reason: timeout.aborted ? "timeout" : "failed" };
  }
}

async function readLimited(
  response: Dispatcher.ResponseData,
  maxBytes: number,
  html: boolean,
): Promise<Downloaded> {
  const contentType = header(response.headers["content-type"]) ?? "";
  // Slack's sign-in page instead of the file: the bot may not read it.
  if (!html && contentType.toLowerCase().startsWith("text/html")) {
    await response.body.dump();
    return { ok: false, reason: "not_allowed" };
  }
  const length = Number(header(response.headers["content-length"]));
  if (Number.isFinite(length) && length > maxBytes) {
    discard(response.body);
    return { ok: false, reason: "too_large" };
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      discard(response.body);
      return { ok: false, reason: "too_large" };
    }
    chunks.push(chunk as Buffer);
  }
  return { ok: true, bytes: Buffer.concat(chunks), contentType };
}

/** Drops the rest of a body: the connection goes, and the abort it reports is expected. */
function discard(body: Dispatcher.ResponseData["body"]): void {
  body.on("error", () => undefined);
  body.destroy();
}

function allowed(url: string, hosts: readonly string[]): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return false;
    // Plain HTTP only where a test serves files from 127.0.0.1.
    if (parsed.protocol === "http:" && parsed.hostname !== "127.0.0.1") return false;
    return hosts.includes(parsed.host);
  } catch {
    return false;
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
