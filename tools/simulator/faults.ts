/**
 * The faults a test can switch on, in one place so that `resetFaults()` clears them all.
 * Each is consumed by the server or the stream writer at the moment it applies.
 */

export type FailureStatus = number | "reset" | "reset-after";

export interface FailRequestsRule {
  /** How many matching requests fail. */
  count: number;
  /**
   * Default 500. "reset" destroys the connection without an answer (the request does
   * nothing). "reset-after" carries the request out (a run start creates its run), then
   * destroys the connection instead of answering: the client cannot know it succeeded.
   */
  status?: FailureStatus;
  /** Only requests with this method (any case); default any. */
  method?: string;
  /** Only requests whose path (without query) matches; default any. */
  pathPattern?: RegExp;
}

export class Faults {
  /** Delay before every response, in milliseconds. */
  latencyMs = 0;
  /** Streams opened from now on drop the connection after this many events. */
  dropStreamsAfter: number | undefined = undefined;
  /** New runs never reach an end status unless stopped. */
  hangRuns = false;
  /** Bearer tokens the service no longer accepts (a person's revoked token): 401. */
  readonly revokedTokens = new Set<string>();
  /** An authentication incident at the service: every bearer token is refused (401). */
  refuseEveryToken = false;
  #failures: { rule: FailRequestsRule; left: number }[] = [];
  #nextRunStartRetryAfter: number | undefined = undefined;

  failRequests(rule: FailRequestsRule): void {
    if (rule.count > 0) this.#failures.push({ rule, left: rule.count });
  }

  /** The failure the request must answer with, if a rule matches (that use is counted). */
  takeFailure(method: string, path: string): FailureStatus | undefined {
    const match = this.#failures.find(
      ({ rule }) =>
        (rule.method === undefined || rule.method.toUpperCase() === method.toUpperCase()) &&
        (rule.pathPattern === undefined || testPattern(rule.pathPattern, path)),
    );
    if (match === undefined) return undefined;
    match.left -= 1;
    if (match.left <= 0) this.#failures = this.#failures.filter((f) => f !== match);
    return match.rule.status ?? 500;
  }

  rateLimitNextRunStart(retryAfterSeconds: number): void {
    this.#nextRunStartRetryAfter = retryAfterSeconds;
  }

  /** The Retry-After (seconds) of a one-shot 429 for this run start, if one is armed. */
  takeRunStartRateLimit(): number | undefined {
    const seconds = this.#nextRunStartRetryAfter;
    this.#nextRunStartRetryAfter = undefined;
    return seconds;
  }

  reset(): void {
    this.latencyMs = 0;
    this.dropStreamsAfter = undefined;
    this.hangRuns = false;
    this.revokedTokens.clear();
    this.refuseEveryToken = false;
    this.#failures = [];
    this.#nextRunStartRetryAfter = undefined;
  }
}

/** A global or sticky RegExp keeps state between `test` calls; a copy does not. */
function testPattern(pattern: RegExp, path: string): boolean {
  return new RegExp(pattern.source, pattern.flags.replace(/[gy]/gu, "")).test(path);
}
