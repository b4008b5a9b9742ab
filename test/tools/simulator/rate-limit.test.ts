import { afterEach, describe, expect, it } from "vitest";
import { SlidingWindowLimiter } from "../../../tools/simulator/rate-limit.js";
import { type RunningSimulator, startSimulator } from "../../../tools/simulator/server.js";
import { type ErrorBody, ServiceFetch } from "./service-fetch.js";

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** A simulator whose clock only moves when the test says. */
async function start(limits: { runStartsPerMinute?: number; requestsPerMinute?: number } = {}) {
  const clock = { now: 1_700_000_000_000 };
  sim = await startSimulator({
    queueDelayMs: 0,
    answer: { tokensPerSecond: Infinity },
    limits,
    now: () => clock.now,
  });
  return { sim, clock, api: new ServiceFetch(sim.url) };
}

describe("§8 limits: 20 run starts per minute per user", () => {
  it("allows 20 run starts, then 429 with Retry-After and a JSON body", async () => {
    const { sim, clock, api } = await start();
    const thread = await api.createThread();
    const message = await api.postMessage(thread.id, "q");
    const path = `/v1/thread/${thread.id}/runs`;
    for (let i = 0; i < 20; i++) {
      expect((await api.call("POST", path, { triggerMessageId: message.id })).status).toBe(201);
      clock.now += 1000;
    }
    const refused = await api.call<ErrorBody>("POST", path, { triggerMessageId: message.id });
    expect(refused.status).toBe(429);
    expect(refused.body.error.type).toBe("rate_limited");
    // The first start (at t0) leaves the window at t0 + 60 s; now is t0 + 20 s.
    expect(refused.headers.get("retry-after")).toBe("40");
    expect(sim.control.counts().runs).toBe(20);

    clock.now += 39_999;
    expect((await api.call("POST", path, { triggerMessageId: message.id })).status).toBe(429);
    clock.now += 1;
    expect((await api.call("POST", path, { triggerMessageId: message.id })).status).toBe(201);
  });

  it("counts chat completions as run starts, per token", async () => {
    const { api, sim } = await start({ runStartsPerMinute: 2 });
    const chat = { assistantId: "a", messages: [{ role: "user", content: "hi" }] };
    const path = "/v1/agents/chat/completions";
    expect((await api.call("POST", path, chat)).status).toBe(200);
    const { message, thread } = await api.ask("q");
    expect((await api.call("POST", path, chat)).status).toBe(429);
    expect(
      (await api.call("POST", `/v1/thread/${thread.id}/runs`, { triggerMessageId: message.id }))
        .status,
    ).toBe(429);
    const other = new ServiceFetch(sim.url, "another-person");
    expect((await other.call("POST", path, chat)).status).toBe(200);
  });

  it("does not count refused run starts (400, 404, 429) against the limit", async () => {
    const { api, clock } = await start({ runStartsPerMinute: 1 });
    const thread = await api.createThread();
    const message = await api.postMessage(thread.id, "q");
    const path = `/v1/thread/${thread.id}/runs`;
    expect((await api.call("POST", path, { triggerMessageId: "nope" })).status).toBe(400);
    expect((await api.call("POST", `/v1/thread/${crypto.randomUUID()}/runs`, {})).status).toBe(404);
    expect((await api.call("POST", path, { triggerMessageId: message.id })).status).toBe(201);
    for (let i = 0; i < 5; i++) {
      clock.now += 10_000;
      expect((await api.call("POST", path, { triggerMessageId: message.id })).status).toBe(429);
    }
    clock.now += 10_000;
    expect((await api.call("POST", path, { triggerMessageId: message.id })).status).toBe(201);
  });
});

describe("§8 limits: 600 other requests per minute per user", () => {
  it("allows 600 requests a minute, then 429; run starts do not use that budget", async () => {
    const { api, clock, sim } = await start();
    const { thread, message } = await api.ask("q");
    // ask() made 2 counted requests (thread, message) and one run start.
    const statuses: number[] = [];
    // Ten at a time: keeps a handful of keep-alive connections instead of 598 sockets.
    for (let i = 0; i < 598; i += 10) {
      const batch = Array.from({ length: Math.min(10, 598 - i) }, () =>
        api.call("GET", "/v1/threads"),
      );
      statuses.push(...(await Promise.all(batch)).map((a) => a.status));
    }
    expect(statuses).toEqual(Array(598).fill(200));
    const refused = await api.call<ErrorBody>("GET", `/v1/thread/${thread.id}/messages`);
    expect(refused.status).toBe(429);
    expect(refused.body.error.type).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const runStart = await api.call("POST", `/v1/thread/${thread.id}/runs`, {
      triggerMessageId: message.id,
    });
    expect(runStart.status).toBe(201);
    expect((await new ServiceFetch(sim.url, "someone").call("GET", "/v1/threads")).status).toBe(
      200,
    );
    clock.now += 60_000;
    expect((await api.call("GET", "/v1/threads")).status).toBe(200);
  });

  it("does not count unauthenticated or rate-limited requests", async () => {
    const { api, clock } = await start({ requestsPerMinute: 2 });
    for (let i = 0; i < 5; i++) {
      expect((await api.call("GET", "/v1/threads", undefined, { token: null })).status).toBe(401);
    }
    expect((await api.call("GET", "/v1/threads")).status).toBe(200);
    clock.now += 30_000;
    expect((await api.call("GET", "/v1/threads")).status).toBe(200);
    const refused = await api.call("GET", "/v1/threads");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("30");
    clock.now += 30_000;
    // The refused request took no slot: the first slot is free again at t0 + 60 s.
    expect((await api.call("GET", "/v1/threads")).status).toBe(200);
  });
});

describe("SlidingWindowLimiter", () => {
  it("frees each slot exactly one window after its event; Retry-After is at least 1 s", () => {
    let now = 0;
    const limiter = new SlidingWindowLimiter({ limit: 2, windowMs: 1000, now: () => now });
    limiter.record("a");
    now = 400;
    limiter.record("a");
    expect(limiter.check("a")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.check("b")).toEqual({ allowed: true });
    now = 999;
    expect(limiter.check("a").allowed).toBe(false);
    now = 1000;
    expect(limiter.check("a")).toEqual({ allowed: true });
  });
});
