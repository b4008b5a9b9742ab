import { afterEach, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../../tools/simulator/server.js";
import { type ErrorBody, ServiceFetch } from "./service-fetch.js";

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(token?: string) {
  sim = await startSimulator({
    queueDelayMs: 0,
    answer: { tokensPerSecond: Infinity },
    ...(token === undefined ? {} : { token }),
  });
  return sim;
}

const ROUTES: [string, string][] = [
  ["POST", "/v1/thread"],
  ["POST", "/v1/thread/{id}/messages"],
  ["GET", "/v1/thread/{id}/messages"],
  ["POST", "/v1/thread/{id}/runs"],
  ["GET", "/v1/run/{id}"],
  ["GET", "/v1/run/{id}/stream"],
  ["POST", "/v1/runs/{id}/stop"],
  ["GET", "/v1/threads"],
  ["POST", "/v1/agents/chat/completions"],
];

describe("§5 authentication: Authorization: Bearer <token>", () => {
  it.each(ROUTES)("%s %s answers 401 with a JSON error without a token", async (method, path) => {
    const { url } = await start();
    const api = new ServiceFetch(url);
    const body = method === "POST" ? { assistantId: "a" } : undefined;
    const answer = await api.call<ErrorBody>(
      method,
      path.replace("{id}", crypto.randomUUID()),
      body,
      {
        token: null,
      },
    );
    const { status } = answer;
    expect(status).toBe(401);
    expect(answer.body.error.type).toBe("authentication");
    expect(typeof answer.body.error.message).toBe("string");
  });

  it("refuses an empty bearer and other schemes", async () => {
    const { url } = await start();
    const api = new ServiceFetch(url);
    for (const authorization of ["Bearer ", "Bearer", "Basic dXNlcjpwYXNz", "person-token"]) {
      const { status } = await api.call("GET", "/v1/threads", undefined, {
        token: null,
        headers: { authorization },
      });
      expect(status).toBe(401);
    }
  });

  it("accepts any non-empty bearer by default", async () => {
    const { url } = await start();
    for (const token of ["a", "xoxp-person", "eyJhbGciOi.payload.sig"]) {
      expect((await new ServiceFetch(url, token).call("GET", "/v1/threads")).status).toBe(200);
    }
  });

  it("accepts only the configured token when one is set", async () => {
    const { url } = await start("s3cret");
    expect((await new ServiceFetch(url, "s3cret").call("GET", "/v1/threads")).status).toBe(200);
    expect((await new ServiceFetch(url, "wrong").call("GET", "/v1/threads")).status).toBe(401);
  });

  it("keeps each person's threads, messages and runs to that person (404 for others)", async () => {
    const { url, control } = await start();
    const owner = new ServiceFetch(url, "owner");
    const other = new ServiceFetch(url, "other");
    const { thread, message, run } = await owner.ask("mine");
    await control.waitForRunEnd(run.id);
    const attempts: [string, string, unknown][] = [
      ["POST", `/v1/thread/${thread.id}/messages`, { content: "x" }],
      ["GET", `/v1/thread/${thread.id}/messages`, undefined],
      ["POST", `/v1/thread/${thread.id}/runs`, { triggerMessageId: message.id }],
      ["GET", `/v1/run/${run.id}`, undefined],
      ["GET", `/v1/run/${run.id}/stream`, undefined],
      ["POST", `/v1/runs/${run.id}/stop`, undefined],
      [
        "POST",
        "/v1/agents/chat/completions",
        {
          threadId: thread.id,
          messages: [{ role: "user", content: "x" }],
        },
      ],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await other.call<ErrorBody>(method, path, body);
      expect([method, path, answer.status]).toEqual([method, path, 404]);
      expect(answer.body.error.type).toBe("not_found");
    }
    expect(control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });
});

describe("§7 errors: one JSON error body shape, non-success statuses", () => {
  it("answers an unknown route with 404 and a wrong method with 405 (Allow)", async () => {
    const { url } = await start();
    const api = new ServiceFetch(url);
    const unknown = await api.call<ErrorBody>("GET", "/v1/nothing-here");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.type).toBe("not_found");
    const wrong = await api.call<ErrorBody>("DELETE", "/v1/thread");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(wrong.body.error.type).toBe("invalid_request");
    expect((await api.call("GET", `/v1/thread/${crypto.randomUUID()}/runs`)).status).toBe(405);
  });

  it("every error is application/json with {error:{type,message}}", async () => {
    const { url } = await start();
    const api = new ServiceFetch(url);
    const answers = [
      await api.call<ErrorBody>("POST", "/v1/thread", {}),
      await api.call<ErrorBody>("GET", "/v1/threads", undefined, { token: null }),
      await api.call<ErrorBody>("GET", `/v1/run/${crypto.randomUUID()}`),
    ];
    expect(answers.map((a) => [a.status, a.body.error.type])).toEqual([
      [400, "invalid_request"],
      [401, "authentication"],
      [404, "not_found"],
    ]);
    for (const answer of answers) {
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/u);
      expect(Object.keys(answer.body.error).sort()).toEqual(["message", "type"]);
    }
  });
});

describe("§9 versioning: every path begins with /v1", () => {
  it("serves nothing outside /v1", async () => {
    const { url } = await start();
    const api = new ServiceFetch(url);
    for (const path of ["/thread", "/v2/thread", "/", "/v1"]) {
      expect((await api.call("POST", path, { assistantId: "a" })).status).toBe(404);
    }
  });
});
