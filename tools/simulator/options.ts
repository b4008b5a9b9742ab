import { DEFAULT_SSE_DIALECT, isSseDialect, type SseDialect } from "./sse.js";

/** How to start the simulator; every field has a default suited to a local sandbox. */
export interface SimulatorOptions {
  /** TCP port on 127.0.0.1. Default 0 (any free port). */
  port?: number;
  /** When set, only this bearer token is accepted; otherwise any non-empty one. */
  token?: string;
  answer?: {
    /** Generated answer length in characters. Default: varies 400–1600 per question. */
    length?: number;
    /** Chunks (≈ 4 characters each) written per second. Default 50; Infinity = at once. */
    tokensPerSecond?: number;
  };
  /** Time a run spends queued before in_progress, in milliseconds. Default 100. */
  queueDelayMs?: number;
  limits?: {
    /** Run starts per window per token. Default 20. */
    runStartsPerMinute?: number;
    /** Other requests per window per token. Default 600. */
    requestsPerMinute?: number;
    /** Window length in milliseconds. Default 60 000. */
    windowMs?: number;
  };
  /** Run stream dialect. Default "events". */
  dialect?: SseDialect;
  /** Interval of `: keep-alive` comments on streams, in milliseconds. Default 15 000. */
  keepAliveMs?: number;
  /** Clock in epoch milliseconds (rate limits, timestamps). Default Date.now. */
  now?: () => number;
}

export interface ResolvedOptions {
  port: number;
  token: string | undefined;
  answerLength: number | undefined;
  tokensPerSecond: number;
  queueDelayMs: number;
  runStartsPerWindow: number;
  requestsPerWindow: number;
  windowMs: number;
  dialect: SseDialect;
  keepAliveMs: number;
  now: () => number;
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new RangeError(`simulator: ${message}`);
}

const isCount = (n: number) => Number.isInteger(n) && n >= 1;

/** Applies the defaults and refuses values that would make the simulator misbehave. */
export function resolveOptions(options: SimulatorOptions = {}): ResolvedOptions {
  const resolved: ResolvedOptions = {
    port: options.port ?? 0,
    token: options.token,
    answerLength: options.answer?.length,
    tokensPerSecond: options.answer?.tokensPerSecond ?? 50,
    queueDelayMs: options.queueDelayMs ?? 100,
    runStartsPerWindow: options.limits?.runStartsPerMinute ?? 20,
    requestsPerWindow: options.limits?.requestsPerMinute ?? 600,
    windowMs: options.limits?.windowMs ?? 60_000,
    dialect: options.dialect ?? DEFAULT_SSE_DIALECT,
    keepAliveMs: options.keepAliveMs ?? 15_000,
    now: options.now ?? Date.now,
  };
  check(
    Number.isInteger(resolved.port) && resolved.port >= 0 && resolved.port <= 65_535,
    "port must be an integer from 0 to 65535",
  );
  check(resolved.token === undefined || resolved.token.trim() !== "", "token must not be empty");
  check(
    resolved.answerLength === undefined || isCount(resolved.answerLength),
    "answer length must be a positive integer",
  );
  check(resolved.tokensPerSecond > 0, "tokensPerSecond must be positive");
  check(resolved.queueDelayMs >= 0, "queueDelayMs must not be negative");
  check(isCount(resolved.runStartsPerWindow), "runStartsPerMinute must be a positive integer");
  check(isCount(resolved.requestsPerWindow), "requestsPerMinute must be a positive integer");
  check(resolved.windowMs > 0, "windowMs must be positive");
  check(isSseDialect(resolved.dialect), `unknown dialect ${resolved.dialect}`);
  check(resolved.keepAliveMs > 0, "keepAliveMs must be positive");
  return resolved;
}
