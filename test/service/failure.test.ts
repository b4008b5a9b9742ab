import { describe, expect, it } from "vitest";
import { BudgetCanceled } from "../../src/budgets/service/budget.js";
import {
  CanceledError,
  ConnectionError,
  RateLimitedError,
  TimeoutError,
} from "../../src/service/errors.js";
import { toServiceError } from "../../src/service/failure.js";

describe("toServiceError", () => {
  const info = { method: "POST", path: "/v1/thread" };
  it.each([
    ["ECONNREFUSED", ConnectionError, false],
    ["UND_ERR_CONNECT_TIMEOUT", ConnectionError, false],
    ["ENOTFOUND", ConnectionError, false],
    ["EAI_AGAIN", ConnectionError, false],
    ["UND_ERR_SOCKET", ConnectionError, true],
    ["ECONNRESET", ConnectionError, true],
    ["UND_ERR_HEADERS_TIMEOUT", TimeoutError, undefined],
    ["UND_ERR_BODY_TIMEOUT", TimeoutError, undefined],
  ])("%s → %o (sent %s)", (code, cls, sent) => {
    const error = toServiceError(Object.assign(new Error("x"), { code }), info);
    expect(error).toBeInstanceOf(cls);
    if (sent !== undefined) expect((error as ConnectionError).sent).toBe(sent);
  });

  it("treats an unknown failure as possibly sent", () => {
    const error = toServiceError(new Error("something odd"), info);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).sent).toBe(true);
  });

  it("finds codes in the cause chain and in aggregate errors", () => {
    const wrapped = new TypeError("fetch failed", {
      cause: new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" })]),
    });
    const error = toServiceError(wrapped, info);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).sent).toBe(false);
  });

  it("passes service errors through and maps an aborted caller to CanceledError", () => {
    const original = new RateLimitedError("x", info, 1);
    expect(toServiceError(original, info)).toBe(original);
    expect(toServiceError(new Error("aborted"), info, AbortSignal.abort())).toBeInstanceOf(
      CanceledError,
    );
    expect(toServiceError(new BudgetCanceled(), info)).toBeInstanceOf(CanceledError);
  });
});
