import type { IncomingHttpHeaders } from "node:http";
import type { BudgetKind } from "../../budgets/service/budget.js";
import type { Credential } from "../credential.js";
import type { RequestInfo } from "../errors.js";

/** One call of the request core (http.ts): what is asked, the caller's options, what comes back. */

export interface QueueInfo {
  position: number;
  expectedWaitMs: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /**
   * The credential of this call, in place of the client's source: a token being checked
   * before it is linked, or a person's own listing of their threads.
   */
  credential?: Credential;
  /** Fairness key for the budget (a Slack person): parties are served round-robin. */
  party?: string;
  /** The Slack workspace (installation) of `party`, whose linked token it may carry. */
  workspace?: string;
  /**
   * Whose service thread the call is about (a person's Slack id, or "shared"), when known:
   * the service answers a thread, its messages and runs only to the token that created it,
   * so the credential source sends the call with that identity, or not at all.
   */
  threadOwner?: string;
  /** Called while the call waits in the budget: first when it has to wait, then on changes. */
  onQueued?: (p: QueueInfo) => void;
  /**
   * Called once each attempt has its connection (after its wait in the budget and any
   * connection being opened); nothing of the request is written until what it returns has
   * resolved, so that what the caller records of it is kept before any of it can reach the
   * service, and a caller dying in between has almost never recorded a request that did not
   * leave. A request aborted before then is not called for. If it throws or rejects, nothing
   * is sent and the call fails with a CanceledError whose `cause` is that error. `identity`
   * names the credential it carries ("shared", or the person whose own token it is).
   */
  onSend?: (sent: { identity: string }) => void | Promise<void>;
}

export interface ServiceRequest {
  method: "GET" | "POST";
  /** Path under the base URL, ids already encoded, e.g. `/v1/run/<id>`. */
  path: string;
  query?: Readonly<Record<string, string>>;
  /**
   * Serialised as JSON (POST only). A function (its result awaited) is called when the
   * request is about to be sent, after its wait in the budget, so the body says what holds
   * at that moment.
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

export function requestInfo(req: Pick<ServiceRequest, "method" | "path">): RequestInfo {
  return { method: req.method, path: req.path };
}
