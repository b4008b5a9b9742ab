import type { Dispatcher } from "undici";
import type { ServiceBudget } from "../../budgets/service/budget.js";
import type { Clock } from "../../time.js";
import type { Credential, CredentialSource } from "../credential.js";
import type { RateLimitedError } from "../errors.js";

/** How the request core (http.ts) is set up: where the service is, its limits and timeouts. */

/** What the client needs of a budget; a `ServiceBudget` shared by every caller in production. */
export type ClientBudget = Pick<ServiceBudget, "take" | "pauseUntil"> &
  Partial<Pick<ServiceBudget, "expect">>;

export interface HttpOptions {
  /** The service's {base_url}; requests go to `<baseUrl>/v1/...`. */
  baseUrl: string;
  /** Bearer token. Never logged and never part of an error message. */
  token: string;
  /**
   * Which token each call carries, asked per request (people/identities.ts: a person's own
   * token or the shared one). Default: `token` for every call, as "shared".
   */
  credentials?: CredentialSource;
  /** Called once per request sent, with the identity it used (never the token); default none. */
  onRequest?: (entry: ServiceRequestEntry) => void;
  /** Shared scheduler of the service's rate limits. Default: a private one with the interface's limits. */
  budget?: ClientBudget;
  /** undici dispatcher. Default: an Agent built from the timeouts below (closed by `close()`). */
  dispatcher?: Dispatcher;
  /** Default 5_000 ms: establishing the TCP connection. Only used for the default dispatcher. */
  connectTimeoutMs?: number;
  /** Default 30_000 ms: from sending the request to the response headers. */
  headersTimeoutMs?: number;
  /** Default 30_000 ms: longest pause between two chunks of a JSON response body. */
  bodyTimeoutMs?: number;
  /** Default 4: retries after the first attempt (so at most 5 requests). */
  maxRetries?: number;
  /** Default 500 ms: full-jitter exponential backoff base. */
  retryBaseDelayMs?: number;
  /** Default 15_000 ms: cap of one backoff delay (a `Retry-After` is honoured even when longer). */
  retryMaxDelayMs?: number;
  /**
   * Default the system clock: the waits between retries, and the time of a Retry-After.
   * Must be the budget's clock (`pauseUntil` is given in its time).
   */
  clock?: Clock;
  /** Default Math.random: the backoff jitter, in [0, 1). */
  random?: () => number;
  /** Called on every 429 the service answers (for metrics); default none. */
  onRateLimited?: (error: RateLimitedError) => void;
}

/** One request as the log tells it: who it was sent as, what, and how it ended. */
export interface ServiceRequestEntry {
  identity: Credential["identity"];
  method: string;
  path: string;
  /** The HTTP status, or the kind of failure when there was no response. */
  outcome: number | string;
}
