import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ServiceClient } from "../../../src/service/client.js";
import { PersonalTokenError } from "../../../src/service/errors.js";
import { type RunningSimulator, startSimulator } from "../../../tools/simulator/server.js";
import { type ListBody, ServiceFetch } from "./service-fetch.js";

/** Each bearer token is a person: their own threads, their own limits, revocable. */
let sim: RunningSimulator;
beforeEach(async () => {
  sim = await startSimulator({ queueDelayMs: 0, answer: { tokensPerSecond: Infinity } });
});
afterEach(async () => {
  await sim.close();
});

describe("a bearer token as a person", () => {
  it("lists only its own threads, filtered by assistantId, paged with limit and after", async () => {
    for (let i = 0; i < 5; i++)
      sim.control.createThread("alice-token", i < 3 ? "asst-1" : "asst-2", `a${i}`);
    sim.control.createThread("bob-token", "asst-1", "b0");
    const alice = new ServiceFetch(sim.url, "alice-token");
    const first = await alice.call<ListBody<{ id: string; title: string }>>(
      "GET",
      "/v1/threads?assistantId=asst-1&limit=2",
    );
    expect(first.status).toBe(200);
    expect(first.body.data.map((t) => t.title)).toEqual(["a0", "a1"]);
    expect(first.body).toMatchObject({ object: "list", has_more: true });
    const next = await alice.call<ListBody<{ title: string }>>(
      "GET",
      `/v1/threads?assistantId=asst-1&limit=2&after=${first.body.last_id}`,
    );
    expect(next.body.data.map((t) => t.title)).toEqual(["a2"]);
    expect(next.body.has_more).toBe(false);
    const bob = await new ServiceFetch(sim.url, "bob-token").call<ListBody<{ title: string }>>(
      "GET",
      "/v1/threads",
    );
    expect(bob.body.data.map((t) => t.title)).toEqual(["b0"]);
  });

  it("is read by the bot's client exactly as served, every page, with the token given", async () => {
    for (let i = 0; i < 450; i++) sim.control.createThread("alice-token", "asst-1", `t${i}`);
    sim.control.createThread("alice-token", "asst-2", "other");
    const client = new ServiceClient({ baseUrl: sim.url, token: "shared-token", maxRetries: 0 });
    const threads = await client.listThreads(
      { assistantId: "asst-1" },
      { credential: { identity: "U0ALICE", token: "alice-token", personal: true } },
    );
    expect(threads).toHaveLength(450);
    expect(threads.at(-1)).toMatchObject({ title: "t449", assistantId: "asst-1" });
    const asked = sim.control.requests.filter((r) => r.path === "/v1/threads");
    expect(
      asked.map((r) => [r.token, r.query.assistantId, r.query.limit, r.query.after ?? null]),
    ).toEqual([
      ["alice-token", "asst-1", "400", null],
      ["alice-token", "asst-1", "400", threads[399]?.id],
    ]);
    await client.close();
  });

  it("is refused (401) once revoked, while other tokens go on", async () => {
    sim.control.revokeToken("alice-token");
    const alice = await new ServiceFetch(sim.url, "alice-token").call("GET", "/v1/threads");
    expect(alice.status).toBe(401);
    const bob = await new ServiceFetch(sim.url, "bob-token").call("GET", "/v1/threads");
    expect(bob.status).toBe(200);
    const refused: unknown[] = [];
    const personal = new ServiceClient({
      baseUrl: sim.url,
      token: "shared-token",
      maxRetries: 0,
      credentials: {
        resolve: () => ({ identity: "U0ALICE", token: "alice-token", personal: true }),
        refused: (c) => {
          refused.push(c.identity);
          return "forgotten";
        },
      },
    });
    await expect(personal.listThreads({}, { party: "U0ALICE" })).rejects.toBeInstanceOf(
      PersonalTokenError,
    );
    expect(refused).toEqual(["U0ALICE"]);
    await personal.close();
  });

  it("refuses every token while the service refuses everyone, as it refuses a revoked one", async () => {
    sim.control.refuseEveryToken(true);
    for (const token of ["alice-token", "bob-token"]) {
      const answer = await new ServiceFetch(sim.url, token).call("GET", "/v1/threads");
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toBe('Bearer realm="assistant"');
    }
    sim.control.refuseEveryToken(false);
    expect((await new ServiceFetch(sim.url, "alice-token").call("GET", "/v1/threads")).status).toBe(
      200,
    );
    sim.control.refuseEveryToken(true);
    sim.control.resetFaults();
    expect((await new ServiceFetch(sim.url, "bob-token").call("GET", "/v1/threads")).status).toBe(
      200,
    );
  });
});
