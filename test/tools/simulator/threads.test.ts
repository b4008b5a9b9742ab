import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type RunningSimulator,
  type SimulatorMessage,
  type SimulatorThread,
  startSimulator,
} from "../../../tools/simulator/server.js";
import { type ErrorBody, type ListBody, ServiceFetch, UUID_V4 } from "./service-fetch.js";

let sim: RunningSimulator;
let api: ServiceFetch;

beforeEach(async () => {
  sim = await startSimulator({ queueDelayMs: 0, answer: { tokensPerSecond: Infinity } });
  api = new ServiceFetch(sim.url);
});
afterEach(async () => {
  await sim.close();
});

describe("§4 POST /v1/thread", () => {
  it("opens a thread with a UUID id (§2), the assistant and the title", async () => {
    const { status, body } = await api.call<SimulatorThread>("POST", "/v1/thread", {
      assistantId: "asst-1",
      title: "Deploys",
    });
    expect(status).toBe(201);
    expect(body.id).toMatch(UUID_V4);
    expect(body).toMatchObject({ assistantId: "asst-1", title: "Deploys" });
    expect(Date.parse(body.createdAt)).not.toBeNaN();
    expect(sim.control.threads()).toEqual([body]);
  });

  it("leaves the optional title out when none is sent and accepts unknown fields", async () => {
    const { status, body } = await api.call("POST", "/v1/thread", {
      assistantId: "asst-1",
      extra: { anything: true },
    });
    expect(status).toBe(201);
    expect(body).not.toHaveProperty("title");
    expect(body).not.toHaveProperty("extra");
  });

  it.each([
    ["assistantId missing", {}],
    ["assistantId empty", { assistantId: "" }],
    ["assistantId blank", { assistantId: "   " }],
    ["assistantId not a string", { assistantId: 7 }],
    ["title not a string", { assistantId: "asst-1", title: 3 }],
  ])("refuses %s with 400 and a JSON error", async (_name, payload) => {
    const { status, body } = await api.call<ErrorBody>("POST", "/v1/thread", payload);
    expect(status).toBe(400);
    expect(body.error.type).toBe("invalid_request");
    expect(body.error.message).toMatch(/assistantId|title/u);
    expect(sim.control.counts().threads).toBe(0);
  });

  it.each([
    ["an array", "[]"],
    ["a string", '"hello"'],
    ["null", "null"],
    ["not JSON", "{assistantId:"],
    ["empty", ""],
  ])("refuses a body that is %s with 400", async (_name, rawBody) => {
    const { status, body } = await api.call<ErrorBody>("POST", "/v1/thread", undefined, {
      rawBody,
    });
    expect(status).toBe(400);
    expect(body.error).toEqual({
      type: "invalid_request",
      message: "the request body must be a JSON object",
    });
  });
});

describe("§4 POST /v1/thread/{id}/messages", () => {
  it("posts a message with a UUID id into the thread", async () => {
    const thread = await api.createThread();
    const { status, body } = await api.call<SimulatorMessage>(
      "POST",
      `/v1/thread/${thread.id}/messages`,
      { content: "How do I deploy?" },
    );
    expect(status).toBe(201);
    expect(body.id).toMatch(UUID_V4);
    expect(body).toMatchObject({ threadId: thread.id, role: "user", content: "How do I deploy?" });
    expect(sim.control.messages(thread.id)).toEqual([body]);
  });

  it("accepts empty content but refuses missing or non-string content", async () => {
    const thread = await api.createThread();
    const path = `/v1/thread/${thread.id}/messages`;
    expect((await api.call("POST", path, { content: "" })).status).toBe(201);
    for (const payload of [{}, { content: null }, { content: 5 }, { content: ["a"] }]) {
      const { status, body } = await api.call<ErrorBody>("POST", path, payload);
      expect(status).toBe(400);
      expect(body.error.message).toMatch(/content/u);
    }
    expect(sim.control.counts().messages).toBe(1);
  });

  it("answers 404 for an unknown or malformed thread id", async () => {
    for (const id of [crypto.randomUUID(), "not-a-uuid"]) {
      const { status, body } = await api.call<ErrorBody>("POST", `/v1/thread/${id}/messages`, {
        content: "hi",
      });
      expect(status).toBe(404);
      expect(body.error.type).toBe("not_found");
    }
  });
});

describe("§4 GET /v1/thread/{id}/messages (§8: up to 400 per page)", () => {
  async function threadWith(count: number) {
    const thread = await api.createThread();
    for (let i = 0; i < count; i++) await api.postMessage(thread.id, `message ${i}`);
    return thread;
  }

  it("lists oldest first in the list shape, 100 by default", async () => {
    const thread = await threadWith(101);
    const { status, body } = await api.call<ListBody<SimulatorMessage>>(
      "GET",
      `/v1/thread/${thread.id}/messages`,
    );
    expect(status).toBe(200);
    expect(body.object).toBe("list");
    expect(body.data).toHaveLength(100);
    expect(body.data[0]?.content).toBe("message 0");
    expect(body.first_id).toBe(body.data[0]?.id);
    expect(body.last_id).toBe(body.data[99]?.id);
    expect(body.has_more).toBe(true);
  });

  it("clamps limit to 400 and pages on with after=<last_id>", async () => {
    const thread = await threadWith(450);
    const path = `/v1/thread/${thread.id}/messages`;
    const first = await api.call<ListBody<SimulatorMessage>>("GET", `${path}?limit=1000`);
    expect(first.body.data).toHaveLength(400);
    expect(first.body.has_more).toBe(true);
    const second = await api.call<ListBody<SimulatorMessage>>(
      "GET",
      `${path}?limit=400&after=${first.body.last_id}`,
    );
    expect(second.body.data).toHaveLength(50);
    expect(second.body.data[0]?.content).toBe("message 400");
    expect(second.body.has_more).toBe(false);
  });

  it("includes the assistant's answer once a run completes", async () => {
    sim.control.enqueueAnswer({ text: "Use a rolling update." });
    const { thread, run } = await api.ask("How do I deploy?");
    await sim.control.waitForRunEnd(run.id);
    const { body } = await api.call<ListBody<SimulatorMessage>>(
      "GET",
      `/v1/thread/${thread.id}/messages`,
    );
    expect(body.data.map((m) => [m.role, m.content])).toEqual([
      ["user", "How do I deploy?"],
      ["assistant", "Use a rolling update."],
    ]);
  });

  it("gives an empty page after the last message", async () => {
    const thread = await threadWith(2);
    const all = await api.call<ListBody<SimulatorMessage>>(
      "GET",
      `/v1/thread/${thread.id}/messages`,
    );
    const after = await api.call<ListBody<SimulatorMessage>>(
      "GET",
      `/v1/thread/${thread.id}/messages?after=${all.body.last_id}`,
    );
    expect(after.body).toEqual({
      object: "list",
      data: [],
      first_id: null,
      last_id: null,
      has_more: false,
    });
  });

  it.each(["limit=0", "limit=-1", "limit=2.5", "limit=abc", "limit=", "after=unknown"])(
    "refuses %s with 400",
    async (query) => {
      const thread = await threadWith(1);
      const { status, body } = await api.call<ErrorBody>(
        "GET",
        `/v1/thread/${thread.id}/messages?${query}`,
      );
      expect(status).toBe(400);
      expect(body.error.type).toBe("invalid_request");
    },
  );

  it("answers 404 for an unknown thread", async () => {
    const { status } = await api.call("GET", `/v1/thread/${crypto.randomUUID()}/messages`);
    expect(status).toBe(404);
  });
});

describe("§4 GET /v1/threads", () => {
  it("lists only the caller's own threads, filterable by assistantId", async () => {
    const a1 = await api.createThread("asst-1");
    const a2 = await api.createThread("asst-2");
    const a3 = await api.createThread("asst-1");
    await new ServiceFetch(sim.url, "someone-else").createThread("asst-1");

    const all = await api.call<ListBody<SimulatorThread>>("GET", "/v1/threads");
    expect(all.status).toBe(200);
    expect(all.body.data.map((t) => t.id)).toEqual([a1.id, a2.id, a3.id]);

    const filtered = await api.call<ListBody<SimulatorThread>>(
      "GET",
      "/v1/threads?assistantId=asst-1",
    );
    expect(filtered.body.data.map((t) => t.id)).toEqual([a1.id, a3.id]);
  });

  it("pages with limit and after", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await api.createThread()).id);
    const first = await api.call<ListBody<SimulatorThread>>("GET", "/v1/threads?limit=2");
    expect(first.body.data.map((t) => t.id)).toEqual(ids.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const rest = await api.call<ListBody<SimulatorThread>>(
      "GET",
      `/v1/threads?limit=10&after=${first.body.last_id}`,
    );
    expect(rest.body.data.map((t) => t.id)).toEqual(ids.slice(2));
    expect(rest.body.has_more).toBe(false);
  });

  it("refuses a bad limit, an unknown cursor and an empty filter with 400", async () => {
    for (const query of ["limit=0", "after=nope", "assistantId="]) {
      expect((await api.call("GET", `/v1/threads?${query}`)).status).toBe(400);
    }
  });
});
