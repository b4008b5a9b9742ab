import { describe, expect, it, vi } from "vitest";
import { serviceProbe } from "../../src/observability/service-probe.js";
import { RateLimitedError, ServerError } from "../../src/service/errors.js";
import { ManualClock } from "../support/manual-clock.js";

const info = { method: "GET", path: "/v1/threads" };

describe("the service readiness probe", () => {
  it("is ready when the service answers", async () => {
    const request = vi.fn(async () => []);
    expect(await serviceProbe({ request })()).toBe(true);
    expect(request).toHaveBeenCalledTimes(1);
  });

  it("is ready when the service says 429: it is up, only busy", async () => {
    const probe = serviceProbe({
      request: async () => {
        throw new RateLimitedError("slow down", info, 1);
      },
    });
    expect(await probe()).toBe(true);
  });

  it("is not ready when the service fails", async () => {
    const probe = serviceProbe({
      request: async () => {
        throw new ServerError("boom", info, 503);
      },
    });
    expect(await probe()).toBe(false);
  });

  it("is ready, without waiting, when the request would queue behind the bot's own calls", async () => {
    let aborted = false;
    const probe = serviceProbe({
      request: ({ signal, onQueued }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            reject(new Error("canceled"));
          });
          onQueued();
        }),
    });
    expect(await probe()).toBe(true);
    expect(aborted).toBe(true);
  });

  it("gives up after timeoutMs and says not ready", async () => {
    const clock = new ManualClock();
    let signal: AbortSignal | undefined;
    const verdict = serviceProbe({
      timeoutMs: 500,
      clock,
      request: (call) =>
        new Promise((_resolve, reject) => {
          signal = call.signal;
          call.signal.addEventListener("abort", () => reject(new Error("timed out")));
        }),
    })();
    await clock.advance(499);
    expect(signal?.aborted).toBe(false);
    await clock.advance(1);
    expect(await verdict).toBe(false);
  });
});
