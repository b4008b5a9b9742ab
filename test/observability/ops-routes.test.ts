import { afterEach, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/observability/metrics.js";
import { type OpsServer, startOpsServer } from "../../src/observability/ops-server.js";
import { type OpsAccess, opsRoutes, type Readiness } from "../../src/observability/routes.js";
import { ManualClock } from "../support/manual-clock.js";

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(readiness: Readiness, metrics = createMetrics(), access: OpsAccess = {}) {
  server = await startOpsServer(opsRoutes(metrics, readiness, access), {
    port: 0,
    host: "127.0.0.1",
  });
  const base = `http://127.0.0.1:${server.port}`;
  return async (path: string, method = "GET", headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, { method, headers });
    return {
      status: response.status,
      text: await response.text(),
      challenge: response.headers.get("www-authenticate"),
    };
  };
}

/** How a GET to `url` ends: its status, or the network error's code (ECONNREFUSED, …). */
async function reach(url: string): Promise<number | string> {
  try {
    return (await fetch(url)).status;
  } catch (error) {
    return String((error as { cause?: { code?: unknown } }).cause?.code ?? error);
  }
}

describe("the ops routes on their own server", () => {
  it("answers /healthz, 404 for an unknown path and 405 for another method", async () => {
    const get = await serve({ checks: {} });
    expect(await get("/healthz")).toMatchObject({ status: 200, text: '{"status":"ok"}' });
    expect((await get("/healthz?probe=1")).status).toBe(200);
    expect((await get("/nothing")).status).toBe(404);
    expect((await get("/healthz", "POST")).status).toBe(405);
  });

  it("is not ready when a check throws, says no, or does not answer in time", async () => {
    const clock = new ManualClock();
    const get = await serve({
      timeoutMs: 3_000,
      clock,
      checks: {
        fine: () => true,
        says_no: async () => false,
        throws: () => {
          throw new Error("broken");
        },
        hangs: () => new Promise<boolean>(() => undefined),
      },
    });
    const asking = get("/readyz");
    // The checks start together; the three that answer at once leave only the hanging one.
    await clock.waitForTimers(1);
    await clock.advance(0);
    expect(clock.pending).toBe(1);
    await clock.advance(3_000);
    const ready = await asking;
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toEqual({
      status: "not ready",
      checks: { fine: true, says_no: false, throws: false, hangs: false },
    });
  });

  it("reads the gauges at scrape time", async () => {
    const metrics = createMetrics();
    let pending = 3;
    metrics.watch({
      serviceQueues: () => [
        { kind: "run_start", queued: 2 },
        { kind: "request", queued: 0 },
      ],
      pendingEdits: () => pending,
      activeConversations: () => 5,
      leasesHeld: () => 4,
    });
    const get = await serve({ checks: {} }, metrics);
    let text = (await get("/metrics")).text;
    expect(text).toContain('bridge_service_queue_length{kind="run_start"} 2');
    expect(text).toContain("bridge_slack_pending_edits 3");
    expect(text).toContain("bridge_active_conversations 5");
    expect(text).toContain("bridge_conversation_leases_held 4");
    expect(text).toContain("bridge_conversation_takeovers_total 0");
    expect(text).toContain('bridge_turns_total{outcome="completed"} 0');
    pending = 0;
    text = (await get("/metrics")).text;
    expect(text).toContain("bridge_slack_pending_edits 0");
  });
});

describe("who reaches the ops server", () => {
  it("listens only on the address it is given", async () => {
    // All of 127.0.0.0/8 is this machine: a second loopback address shows what is bound.
    server = await startOpsServer(opsRoutes(createMetrics(), { checks: {} }), {
      port: 0,
      host: "127.0.0.2",
    });
    expect(await reach(`http://127.0.0.2:${server.port}/healthz`)).toBe(200);
    expect(await reach(`http://127.0.0.1:${server.port}/healthz`)).toBe("ECONNREFUSED");
  });

  it("answers /metrics only with the configured bearer token", async () => {
    const token = "metrics-token-0123456789";
    const get = await serve({ checks: {} }, createMetrics(), { metricsToken: token });

    const without = await get("/metrics");
    expect(without.status).toBe(401);
    expect(without.challenge).toBe('Bearer realm="metrics"');
    expect(without.text).not.toContain("bridge_");
    for (const authorization of [
      "Bearer wrong-token-0123456789",
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, -1)}`,
      `Basic ${Buffer.from(`x:${token}`).toString("base64")}`,
      token,
      "Bearer ",
    ]) {
      const refused = await get("/metrics", "GET", { authorization });
      expect(refused.status, authorization).toBe(401);
      expect(refused.text).not.toContain("bridge_");
    }

    const answered = await get("/metrics", "GET", { authorization: `Bearer ${token}` });
    expect(answered.status).toBe(200);
    expect(answered.text).toContain('bridge_turns_total{outcome="completed"} 0');
    // Health and readiness stay open: probes carry no credentials.
    expect((await get("/healthz")).status).toBe(200);
    expect((await get("/readyz")).status).toBe(200);
  });

  it("leaves /metrics open when no token is configured", async () => {
    const get = await serve({ checks: {} });
    expect((await get("/metrics")).status).toBe(200);
  });
});
