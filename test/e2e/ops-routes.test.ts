/**
 * The ops routes of the whole bot, from outside: what a loop on them costs the service,
 * which address they listen on, and who may read the metrics.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../support/bridge-harness.js";
import { SkippableClock } from "../support/manual-clock.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { status: response.status, text: await response.text() };
}

/** How a GET to `url` ends: its status, or the network error's code (ECONNREFUSED, …). */
async function reach(url: string): Promise<number | string> {
  try {
    return (await fetch(url)).status;
  } catch (error) {
    return String((error as { cause?: { code?: unknown } }).cause?.code ?? error);
  }
}

/** 200 calls to `/readyz`: 100 at once, then 100 one after another. Their statuses. */
async function hammer(opsUrl: string): Promise<number[]> {
  const together = await Promise.all(
    Array.from({ length: 100 }, async () => (await get(`${opsUrl}/readyz`)).status),
  );
  const inTurn: number[] = [];
  for (let i = 0; i < 100; i++) inTurn.push((await get(`${opsUrl}/readyz`)).status);
  return [...together, ...inTurn];
}

describe.each([
  ["HTTP mode", false],
  ["Socket Mode", true],
])("/readyz hammered in %s", (_mode, socketMode) => {
  it("costs at most one service request per 10 s of the bot's clock", async () => {
    const clock = new SkippableClock();
    h = await startHarness({ socketMode, clock });
    const probes = () => h?.serviceRequests("GET", /^\/v1\/threads$/).length ?? 0;
    const since = clock.now();
    expect(probes()).toBe(0);

    expect(await hammer(h.opsUrl)).toEqual(Array(200).fill(200));
    expect(probes()).toBe(1);

    // Ten seconds on, the next caller asks the service again; one request for all of them.
    clock.skip(10_000);
    expect(await hammer(h.opsUrl)).toEqual(Array(200).fill(200));
    expect(probes()).toBe(2);
    expect(probes()).toBeLessThanOrEqual(1 + Math.floor((clock.now() - since) / 10_000));
    const ready = JSON.parse((await get(`${h.opsUrl}/readyz`)).text);
    expect(ready.checks).toEqual({ database: true, slack: true, service: true });
  });
});

describe("the address the ops routes listen on", () => {
  it("is 127.0.0.1 alone in Socket Mode by default", async () => {
    h = await startHarness({ socketMode: true });
    const port = new URL(h.opsUrl).port;
    expect(await reach(`http://127.0.0.1:${port}/healthz`)).toBe(200);
    // Any other address of this machine, even another loopback one, is not served.
    expect(await reach(`http://127.0.0.2:${port}/healthz`)).toBe("ECONNREFUSED");
  });

  it("is OPS_HOST when the operator names one", async () => {
    h = await startHarness({ socketMode: true, env: { OPS_HOST: "127.0.0.2" } });
    const port = new URL(h.opsUrl).port;
    expect(await reach(`http://127.0.0.2:${port}/healthz`)).toBe(200);
    expect(await reach(`http://127.0.0.2:${port}/metrics`)).toBe(200);
    expect(await reach(`http://127.0.0.1:${port}/healthz`)).toBe("ECONNREFUSED");
  });

  it("in HTTP mode is a listener of its own with OPS_PORT, off the Slack port", async () => {
    h = await startHarness({ env: { OPS_PORT: "0", OPS_HOST: "127.0.0.2" } });
    const opsPort = new URL(h.opsUrl).port;
    expect(opsPort).not.toBe(new URL(h.botUrl).port);
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      expect(await reach(`${h.botUrl}${path}`), path).toBe(404);
      expect(await reach(`http://127.0.0.2:${opsPort}${path}`), path).toBe(200);
    }
    expect(await reach(`http://127.0.0.1:${opsPort}/healthz`)).toBe("ECONNREFUSED");
  });
});

describe("METRICS_TOKEN", () => {
  const TOKEN = "metrics-token-e2e-0123456789";

  it.each([
    ["HTTP mode, on the Slack port", false],
    ["Socket Mode", true],
  ])("%s: /metrics refuses without the token and answers with it", async (_mode, socketMode) => {
    h = await startHarness({ socketMode, env: { METRICS_TOKEN: TOKEN } });
    expect((await get(`${h.opsUrl}/metrics`)).status).toBe(401);
    expect((await get(`${h.opsUrl}/metrics`, { authorization: "Bearer nope" })).status).toBe(401);
    const answered = await get(`${h.opsUrl}/metrics`, { authorization: `Bearer ${TOKEN}` });
    expect(answered.status).toBe(200);
    expect(answered.text).toContain("bridge_turns_total");
    expect((await get(`${h.opsUrl}/healthz`)).status).toBe(200);
    expect(h.logs.join("\n")).not.toContain(TOKEN);
  });
});
