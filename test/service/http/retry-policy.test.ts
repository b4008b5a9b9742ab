import { describe, expect, it } from "vitest";
import {
  BadRequestError,
  ConnectionError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from "../../../src/service/errors.js";
import { mayRetry, retryDelayMs } from "../../../src/service/http/retry-policy.js";

const info = { method: "POST", path: "/v1/thread/t/runs" };
const GET = { method: "GET" };
const POST = { method: "POST" };
const STOP = { method: "POST", idempotent: true };

describe("mayRetry", () => {
  it.each([
    ["429", new RateLimitedError("x", info, 1), true, true, true],
    ["refused connection", new ConnectionError("x", info, false), true, true, true],
    ["reset connection", new ConnectionError("x", info, true), true, false, true],
    ["timeout", new TimeoutError("x", info), true, false, true],
    ["500", new ServerError("x", info, 500), true, false, true],
    ["400", new BadRequestError("x", info, 400), false, false, false],
    ["404", new NotFoundError("x", info), false, false, false],
  ])("%s: GET %s, POST %s, idempotent POST %s", (_name, error, get, post, stop) => {
    expect(mayRetry(error, GET)).toBe(get);
    expect(mayRetry(error, POST)).toBe(post);
    expect(mayRetry(error, STOP)).toBe(stop);
  });
});

describe("retryDelayMs", () => {
  const timing = { baseDelayMs: 500, maxDelayMs: 15_000, random: () => 0.999 };
  it("honours Retry-After, even beyond the cap", () => {
    expect(retryDelayMs(new RateLimitedError("x", info, 30), 0, timing)).toBe(30_000);
    expect(retryDelayMs(new RateLimitedError("x", info, 0.2), 3, timing)).toBe(200);
  });

  it("is full jitter below an exponential ceiling capped at maxDelayMs", () => {
    const error = new ServerError("x", info, 503);
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(error, n, timing))).toEqual([
      499, 999, 1998, 3996, 7992, 14985, 14985,
    ]);
    expect(retryDelayMs(error, 4, { ...timing, random: () => 0 })).toBe(0);
  });
});
