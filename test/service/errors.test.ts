import { describe, expect, it } from "vitest";
import {
  AuthenticationError,
  BadRequestError,
  errorForResponse,
  NotFoundError,
  ProtocolError,
  parseRetryAfter,
  RateLimitedError,
  ServerError,
} from "../../src/service/errors.js";

const request = { method: "POST", path: "/v1/thread" };

describe("errorForResponse", () => {
  it.each([
    [401, AuthenticationError],
    [403, AuthenticationError],
    [404, NotFoundError],
    [400, BadRequestError],
    [409, BadRequestError],
    [422, BadRequestError],
    [418, BadRequestError],
    [429, RateLimitedError],
    [500, ServerError],
    [599, ServerError],
    [302, ProtocolError],
  ])("maps %i to %o and keeps the status", (status, cls) => {
    const error = errorForResponse(status, undefined, request);
    expect(error).toBeInstanceOf(cls);
    expect(error.status).toBe(status);
    expect(error.message).toContain("POST /v1/thread");
  });

  it.each([
    [{ error: { type: "invalid_request", message: "assistantId is required" } }],
    [{ error: "assistantId is required" }],
    [{ message: "assistantId is required" }],
    [{ detail: "assistantId is required" }],
  ])("takes the service's message from %j", (body) => {
    expect(errorForResponse(400, body, request).message).toContain("assistantId is required");
  });

  it("never copies a text body (an HTML page) into the message", () => {
    const error = errorForResponse(502, "<html><body>Bad gateway</body></html>", request);
    expect(error.message).not.toContain("<html>");
  });

  it("reads Retry-After seconds on 429", () => {
    const error = errorForResponse(429, {}, request, { "retry-after": "12" });
    expect((error as RateLimitedError).retryAfter).toBe(12);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2030-01-01T00:00:00Z");
  it("reads delta seconds, HTTP dates and Headers objects", () => {
    expect(parseRetryAfter({ "retry-after": "3" }, now)).toBe(3);
    expect(parseRetryAfter({ "retry-after": "1.5" }, now)).toBe(1.5);
    expect(parseRetryAfter({ "retry-after": "Tue, 01 Jan 2030 00:00:10 GMT" }, now)).toBe(10);
    expect(parseRetryAfter(new Headers({ "Retry-After": "4" }), now)).toBe(4);
  });

  it("is 0 for a date in the past and undefined when absent or unreadable", () => {
    expect(parseRetryAfter({ "retry-after": "Mon, 01 Jan 2029 00:00:00 GMT" }, now)).toBe(0);
    expect(parseRetryAfter({}, now)).toBeUndefined();
    expect(parseRetryAfter({ "retry-after": "soon" }, now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
