import { afterEach, describe, expect, it } from "vitest";
import { ServiceBudget } from "../../src/budgets/service/budget.js";
import { type QueueInfo, ServiceClient } from "../../src/service/client.js";
import { budgetUser } from "../../src/service/credential.js";
import { CanceledError } from "../../src/service/errors.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";

/**
 * A budget per token: each linked person has their own 20 run starts a minute, so one
 * person's burst of 30 queues only their own starts, and the queue position each is told is
 * that of their own queue.
 */

const LIMITS = { runStartsPerMinute: 20, requestsPerMinute: 600, windowMs: 60_000 };
const TOKENS: Record<string, string> = { U0ALICE: "alice-token", U0BOB: "bob-token" };

let sim: RunningSimulator | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
});

describe("the service budget per token", () => {
  it("queues a burst of 30 from one person in their own lane; another's start goes at once", async () => {
    sim = await startSimulator({
      port: 0,
      limits: LIMITS,
      queueDelayMs: 0,
      answer: { tokensPerSecond: Infinity },
    });
    sim.control.setDefaultAnswer({ chunks: ["ok"] });
    const service = new ServiceClient({
      baseUrl: sim.url,
      token: "shared-token",
      budget: new ServiceBudget(LIMITS),
      maxRetries: 0,
      credentials: {
        resolve: ({ party }) => ({
          identity: party ?? "shared",
          token: TOKENS[party ?? ""] ?? "shared-token",
          personal: party !== undefined,
        }),
      },
    });
    client = service;
    const as = (party: string) => ({ party });
    const aliceThread = await service.openThread({ assistantId: "a" }, as("U0ALICE"));
    const aliceMessages = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        service.postMessage(aliceThread.id, { content: `q${i}` }, as("U0ALICE")),
      ),
    );
    const bobThread = await service.openThread({ assistantId: "a" }, as("U0BOB"));
    const bobMessage = await service.postMessage(bobThread.id, { content: "mine" }, as("U0BOB"));

    const stop = new AbortController();
    const positions: QueueInfo[][] = aliceMessages.map(() => []);
    const alice = aliceMessages.map((m, i) =>
      service.startRun(
        aliceThread.id,
        { triggerMessageId: m.id },
        {
          party: "U0ALICE",
          signal: stop.signal,
          onQueued: (p) => positions[i]?.push(p),
        },
      ),
    );
    const bobQueued: QueueInfo[] = [];
    const bob = await service.startRun(
      bobThread.id,
      { triggerMessageId: bobMessage.id },
      {
        party: "U0BOB",
        onQueued: (p) => bobQueued.push(p),
      },
    );
    expect(bob.status).toBeDefined();
    expect(bobQueued).toEqual([]);

    await Promise.all(alice.slice(0, 20));
    const starts = (token: string) =>
      sim?.control.requests.filter((r) => r.path.endsWith("/runs") && r.token === token) ?? [];
    expect(starts("alice-token")).toHaveLength(20);
    expect(starts("bob-token")).toHaveLength(1);
    // The 21st to 30th wait behind Alice's own starts only: 0 to 9 ahead.
    expect(positions.slice(20).map((seen) => seen[0]?.position)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    expect(sim.control.requests.some((r) => r.status === 429)).toBe(false);

    stop.abort();
    for (const waiting of alice.slice(20))
      await expect(waiting).rejects.toBeInstanceOf(CanceledError);
  });
});

describe("calls expected ahead", () => {
  it("go to the budget of the token known at once, by its fingerprint; none when it is not known", async () => {
    const expected: [string, string, number][] = [];
    const budget = new ServiceBudget(LIMITS);
    const service = new ServiceClient({
      baseUrl: "http://127.0.0.1:9",
      token: "shared-token",
      budget: {
        take: budget.take.bind(budget),
        pauseUntil: budget.pauseUntil.bind(budget),
        expect: (user, kind, count) => expected.push([user, kind, count]),
      },
      credentials: {
        resolve: () => ({ identity: "shared", token: "shared-token", personal: false }),
        // Alice's own token would be read from the store: not known at once.
        known: ({ party }) =>
          party === "U0ALICE"
            ? undefined
            : { identity: "shared", token: "shared-token", personal: false },
      },
    });
    client = service;
    service.expect({ request: 3, run_start: 1 }, { party: "U0BOB" });
    service.expect({ request: 2, run_start: 1 }, { party: "U0ALICE" });
    expect(expected).toEqual([
      [budgetUser("shared-token"), "request", 3],
      [budgetUser("shared-token"), "run_start", 1],
    ]);
    expect(JSON.stringify(expected)).not.toContain("shared-token");
  });
});
