import { describe, expect, it } from "vitest";
import { throughOutage } from "../../../src/bridge/turn/outage.js";
import { FakeServiceError } from "../../support/fake-service.js";
import { ManualClock } from "../../support/manual-clock.js";

/** A step that fails with `errors` in turn, then answers "ok"; counts its attempts. */
function scripted(errors: Error[]) {
  let attempts = 0;
  const step = async () => {
    attempts++;
    const error = errors.shift();
    if (error) throw error;
    return "ok";
  };
  return { step, attempts: () => attempts };
}

/** Runs `work` to its end, moving the clock a second whenever it waits. */
async function drive<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let settled = false;
  void work.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) await clock.advance(1_000);
  return work;
}

describe("throughOutage", () => {
  it("retries transient failures, telling each one, and returns the answer", async () => {
    const clock = new ManualClock();
    const told: number[] = [];
    const s = scripted([new FakeServiceError("server"), new FakeServiceError("connection")]);
    const options = {
      giveUpAfterMs: 60_000,
      clock,
      onRetry: (_e: unknown, n: number) => told.push(n),
    };
    expect(await drive(clock, throughOutage(s.step, options))).toBe("ok");
    expect([s.attempts(), told]).toEqual([3, [1, 2]]);
  });

  it("gives up once the service has failed for giveUpAfterMs, with the last error", async () => {
    const clock = new ManualClock();
    const errors = Array.from({ length: 1_000 }, () => new FakeServiceError("server"));
    const s = scripted(errors);
    const start = clock.now();
    const work = throughOutage(s.step, { giveUpAfterMs: 30_000, clock, onRetry: () => {} });
    await expect(drive(clock, work)).rejects.toBeInstanceOf(FakeServiceError);
    expect(clock.now() - start).toBeGreaterThanOrEqual(30_000);
    expect(clock.now() - start).toBeLessThan(45_000);
  });

  it("does not retry what the service refused, nor anything after the signal aborted", async () => {
    const clock = new ManualClock();
    const refused = scripted([new FakeServiceError("bad_request")]);
    const options = { giveUpAfterMs: 60_000, clock, onRetry: () => {} };
    await expect(throughOutage(refused.step, options)).rejects.toThrow("fake bad_request");
    expect(refused.attempts()).toBe(1);

    const stop = new AbortController();
    stop.abort();
    const stopped = scripted([new FakeServiceError("server")]);
    await expect(throughOutage(stopped.step, { ...options, signal: stop.signal })).rejects.toThrow(
      "fake server",
    );
    expect(stopped.attempts()).toBe(1);
  });

  it("leaves a 429 to the service budget: retried at once, without the keeps-trying note", async () => {
    const clock = new ManualClock();
    const told: number[] = [];
    const s = scripted([new FakeServiceError("rate_limited")]);
    const options = {
      giveUpAfterMs: 60_000,
      clock,
      onRetry: (_e: unknown, n: number) => told.push(n),
    };
    expect(await throughOutage(s.step, options)).toBe("ok");
    expect([s.attempts(), told, clock.pending]).toEqual([2, [], 0]);
  });
});
