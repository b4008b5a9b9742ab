import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../../tools/simulator/options.js";
import { startSimulator } from "../../../tools/simulator/server.js";

describe("SimulatorOptions", () => {
  it("defaults to the interface's limits and the documented wire choices", () => {
    const resolved = resolveOptions();
    expect({ ...resolved, now: undefined }).toEqual({
      port: 0,
      token: undefined,
      answerLength: undefined,
      tokensPerSecond: 50,
      queueDelayMs: 100,
      runStartsPerWindow: 20,
      requestsPerWindow: 600,
      windowMs: 60_000,
      dialect: "events",
      keepAliveMs: 15_000,
      now: undefined,
    });
  });

  it.each([
    [{ port: -1 }, /port/u],
    [{ token: " " }, /token/u],
    [{ answer: { length: 0 } }, /length/u],
    [{ answer: { tokensPerSecond: 0 } }, /tokensPerSecond/u],
    [{ limits: { runStartsPerMinute: 0 } }, /runStartsPerMinute/u],
    [{ limits: { windowMs: 0 } }, /windowMs/u],
    [{ dialect: "xml" as never }, /dialect/u],
  ])("refuses %j", (options, message) => {
    expect(() => resolveOptions(options)).toThrow(message);
  });

  it("listens on 127.0.0.1 and gives a url without a trailing slash", async () => {
    const sim = await startSimulator();
    try {
      expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
      expect(sim.port).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });
});
