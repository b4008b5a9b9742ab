import { afterEach, describe, expect, it } from "vitest";
import { ServiceBudget } from "../../src/budgets/service/budget.js";
import { type QueueInfo, ServiceClient } from "../../src/service/client.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";

/**
 * The shared budget through the client, against the simulator's own rate limiter with the
 * same numbers on a short window: a burst of run starts never draws a 429.
 */

const LIMITS = { runStartsPerMinute: 20, requestsPerMinute: 600, windowMs: 500 };
const RUNS = 100;

let sim: RunningSimulator | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
});

describe("budget through the client", () => {
  it(`${RUNS} run starts queued at once: no 429, all created, served first come first served`, async () => {
    sim = await startSimulator({
      port: 0,
      limits: LIMITS,
      queueDelayMs: 0,
      answer: { tokensPerSecond: Number.POSITIVE_INFINITY },
    });
    const { control } = sim;
    control.setDefaultAnswer({ chunks: ["ok"] });
    client = new ServiceClient({
      baseUrl: sim.url,
      token: "burst",
      budget: new ServiceBudget(LIMITS),
    });
    const service = client;
    const thread = await service.openThread({ assistantId: "a" });
    const messages = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => service.postMessage(thread.id, { content: `q${i}` })),
    );

    const queued = new Map<number, QueueInfo[]>();
    const runs = await Promise.all(
      messages.map((message, i) =>
        service.startRun(
          thread.id,
          { triggerMessageId: message.id },
          { onQueued: (p) => queued.set(i, [...(queued.get(i) ?? []), p]) },
        ),
      ),
    );

    expect(control.requests.filter((r) => r.status === 429)).toEqual([]);
    expect(new Set(runs.map((r) => r.id)).size).toBe(RUNS);
    expect(control.counts().runs).toBe(RUNS);

    // FIFO: the budget admits 20 per window, so the k-th run start to arrive belongs to
    // the same batch of 20 as the k-th caller (order within a batch is the network's).
    const index = new Map(messages.map((m, i) => [m.id, i]));
    const arrivals = control.requests
      .filter((r) => r.path.endsWith("/runs"))
      .map((r) => index.get((r.body as { triggerMessageId: string }).triggerMessageId) ?? -1);
    expect(arrivals).toHaveLength(RUNS);
    expect(arrivals.map((i) => Math.floor(i / 20))).toEqual(
      arrivals.map((_, k) => Math.floor(k / 20)),
    );

    // Callers beyond the first window heard where they stood; the first 20 did not wait.
    expect(queued.has(0)).toBe(false);
    expect(queued.get(RUNS - 1)?.[0]?.position).toBe(RUNS - 21);
  });
});
