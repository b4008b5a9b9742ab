import {
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
} from "@slack/web-api";
import { describe, expect, it } from "vitest";
import { classifyCallFailure } from "../../../src/slack/web-api/call-failure.js";
import { SlackResponseError } from "../../../src/slack/web-api/web-api.js";

const platform = (error: string) => new WebAPIPlatformError({ ok: false, error });

describe("classifyCallFailure", () => {
  it("reads a 429's Retry-After in seconds", () => {
    expect(classifyCallFailure(new WebAPIRateLimitedError(7))).toEqual({
      kind: "rate_limited",
      retryAfterMs: 7_000,
    });
    expect(classifyCallFailure(new WebAPIRateLimitedError(Number.NaN))).toEqual({
      kind: "rate_limited",
      retryAfterMs: 1_000,
    });
    expect(
      classifyCallFailure(new WebAPIHTTPError(429, "Too Many Requests", { "retry-after": "4" })),
    ).toEqual({ kind: "rate_limited", retryAfterMs: 4_000 });
  });

  it("gives up on platform errors that retrying cannot change", () => {
    for (const reason of [
      "message_not_found",
      "msg_too_long",
      "invalid_blocks",
      "not_in_channel",
      "is_archived",
      "invalid_auth",
      "something_new",
    ]) {
      expect(classifyCallFailure(platform(reason))).toEqual({ kind: "permanent", reason });
    }
    expect(classifyCallFailure(new WebAPIHTTPError(404, "Not Found", {}))).toEqual({
      kind: "permanent",
      reason: "http_404",
    });
  });

  it("does not repeat a call Slack took but answered in a shape the bot cannot read", () => {
    const error = new SlackResponseError("chat.postMessage", "ts: expected string");
    expect(classifyCallFailure(error)).toEqual({ kind: "permanent", reason: "invalid_response" });
  });

  it("retries server trouble and the network", () => {
    expect(classifyCallFailure(platform("internal_error"))).toEqual({ kind: "transient" });
    expect(classifyCallFailure(platform("service_unavailable"))).toEqual({ kind: "transient" });
    expect(classifyCallFailure(new WebAPIHTTPError(502, "Bad Gateway", {}))).toEqual({
      kind: "transient",
    });
    expect(classifyCallFailure(new WebAPIRequestError(new Error("ECONNRESET")))).toEqual({
      kind: "transient",
    });
    expect(classifyCallFailure(new Error("socket hang up"))).toEqual({ kind: "transient" });
  });

  it("treats a platform `ratelimited` answer as a 429", () => {
    expect(classifyCallFailure(platform("ratelimited"))).toEqual({
      kind: "rate_limited",
      retryAfterMs: 1_000,
    });
  });
});
