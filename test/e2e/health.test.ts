import { afterEach, describe, expect, it } from "vitest";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";
import { SkippableClock } from "../support/manual-clock.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function get(url: string) {
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    text: await response.text(),
  };
}

/** The value of one sample of the Prometheus text, e.g. `bridge_turns_total{outcome="completed"}`. */
function sample(metrics: string, series: string): number | undefined {
  for (const line of metrics.split("\n")) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

describe("health and metrics in HTTP mode", () => {
  it("answers /healthz and /readyz with every check passing", async () => {
    h = await startHarness();
    const health = await get(`${h.botUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toEqual({ status: "ok" });

    const ready = await get(`${h.botUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.type).toContain("application/json");
    expect(JSON.parse(ready.text)).toEqual({
      status: "ready",
      checks: { database: true, slack: true, service: true },
    });
    // The service check really asked the service.
    expect(h.serviceRequests("GET", /^\/v1\/threads$/).length).toBeGreaterThan(0);
  });

  it("is not ready while the service fails, and ready again once it answers", async () => {
    const clock = new SkippableClock();
    h = await startHarness({ clock });
    h.sim.control.failRequests({ count: 1, status: 503, pathPattern: /^\/v1\/threads$/ });
    const down = await get(`${h.botUrl}/readyz`);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.text)).toEqual({
      status: "not ready",
      checks: { database: true, slack: true, service: false },
    });
    // The probe is not retried: one failed request, one verdict, kept for 10 s.
    expect(h.sim.control.requests.filter((r) => r.status === 503)).toHaveLength(1);
    expect((await get(`${h.botUrl}/readyz`)).status).toBe(503);
    clock.skip(10_000);
    expect((await get(`${h.botUrl}/readyz`)).status).toBe(200);
  });

  it("is not ready when the service cannot be reached at all", async () => {
    h = await startHarness();
    await h.sim.close();
    const down = await get(`${h.botUrl}/readyz`);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.text).checks).toEqual({ database: true, slack: true, service: false });
    // Still alive.
    expect((await get(`${h.botUrl}/healthz`)).status).toBe(200);
  });

  it("counts an answered mention in /metrics", async () => {
    h = await startHarness();
    const before = (await get(`${h.botUrl}/metrics`)).text;
    expect(sample(before, 'bridge_turns_total{outcome="completed"}')).toBe(0);
    expect(sample(before, 'bridge_slack_edits_total{kind="final"}')).toBe(0);

    h.sim.control.enqueueAnswer({ text: "The answer is **42**.", modelUsed: "flash" });
    const { threadTs } = await h.mention("<@UBOT> what is the answer?");
    await h.settled(CHANNEL, threadTs);

    const metrics = await get(`${h.botUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain("text/plain");
    const text = metrics.text;
    expect(sample(text, 'bridge_turns_total{outcome="completed"}')).toBe(1);
    expect(sample(text, 'bridge_turns_total{outcome="error"}')).toBe(0);
    expect(sample(text, 'bridge_runs_total{status="completed"}')).toBe(1);
    expect(sample(text, 'bridge_inbound_total{result="accepted"}')).toBe(1);
    expect(sample(text, 'bridge_slack_edits_total{kind="final"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "bridge_time_to_first_text_seconds_count")).toBe(1);
    expect(sample(text, 'bridge_slack_rate_limited_total{method="chat.update"}')).toBe(0);
    expect(sample(text, "bridge_service_rate_limited_total")).toBe(0);
    expect(sample(text, "bridge_active_conversations")).toBe(0);
    expect(sample(text, "bridge_slack_pending_edits")).toBe(0);
    expect(sample(text, 'bridge_service_queue_length{kind="run_start"}')).toBe(0);
    // The process's own figures, which the benchmark reads.
    expect(sample(text, "bridge_process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(sample(text, "bridge_process_peak_resident_memory_bytes")).toBeGreaterThan(0);
    expect(sample(text, "bridge_process_cpu_seconds_total")).toBeGreaterThan(0);
  });

  it("counts the service's 429s", async () => {
    h = await startHarness();
    h.sim.control.rateLimitNextRunStart(1);
    h.sim.control.enqueueAnswer({ text: "Later, but here." });
    const { threadTs } = await h.mention("<@UBOT> are you busy?");
    const transcript = await h.settled(CHANNEL, threadTs);
    expect(transcript[0]).toContain("Later, but here.");
    const text = (await get(`${h.botUrl}/metrics`)).text;
    expect(sample(text, "bridge_service_rate_limited_total")).toBe(1);
    expect(sample(text, 'bridge_turns_total{outcome="completed"}')).toBe(1);
  });
});

describe("health and metrics in Socket Mode", () => {
  it("serves them on PORT, and /readyz follows the websocket", async () => {
    h = await startHarness({ socketMode: true });
    expect(h.slack.socket.connections).toBe(1);
    const health = await get(`${h.botUrl}/healthz`);
    expect(health.status).toBe(200);
    const ready = await get(`${h.botUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text).checks).toEqual({ database: true, slack: true, service: true });
    const metrics = await get(`${h.botUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(sample(metrics.text, 'bridge_turns_total{outcome="completed"}')).toBe(0);
    expect((await get(`${h.botUrl}/nope`)).status).toBe(404);

    await h.slack.socket.close();
    const down = await get(`${h.botUrl}/readyz`);
    expect(down.status).toBe(503);
    expect(JSON.parse(down.text).checks).toEqual({ database: true, slack: false, service: true });
  });
});
