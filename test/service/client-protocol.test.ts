import { afterEach, describe, expect, it } from "vitest";
import { ServiceClient } from "../../src/service/client.js";
import { BadRequestError, ProtocolError } from "../../src/service/errors.js";
import type { RunStreamUpdate } from "../../src/service/run-stream.js";
import { ManualClock } from "../support/manual-clock.js";
import { RecordingBudget } from "./fake-budget.js";
import { type LocalHandler, type LocalServer, sendJson, startLocalServer } from "./local-server.js";

/**
 * The client against a tiny local server that answers what a test scripts, including
 * garbage: what the simulator never does.
 */

let server: LocalServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function setUp(
  handler: LocalHandler,
  options: { messagePaging?: { maxPages?: number } } = {},
) {
  server = await startLocalServer(handler);
  const clock = new ManualClock(undefined, { sleepsAdvance: true });
  client = new ServiceClient({
    baseUrl: server.url,
    token: "t",
    budget: new RecordingBudget(),
    clock,
    ...options,
  });
  return { server, client, clock };
}

function answer(status: number, contentType: string, body: string): LocalHandler {
  return (_req, res) => {
    res.writeHead(status, { "content-type": contentType });
    res.end(body);
  };
}

async function protocolErrorOf(promise: Promise<unknown>): Promise<ProtocolError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

describe("responses that break the protocol", () => {
  it("a non-JSON 200 is a ProtocolError naming the endpoint", async () => {
    const { client } = await setUp(answer(200, "application/json", "not json at all"));
    const error = await protocolErrorOf(client.getRun("r1"));
    expect(error.message).toContain("GET /v1/run/r1");
    expect(error.status).toBe(200);
  });

  it("an HTML page is a ProtocolError", async () => {
    const { client } = await setUp(answer(200, "text/html", "<!doctype html><h1>Welcome</h1>"));
    const error = await protocolErrorOf(client.openThread({ assistantId: "a" }));
    expect(error.message).toContain("POST /v1/thread");
    expect(error.message).not.toContain("Welcome");
  });

  it.each([
    ["a run without id", () => client?.getRun("r1"), { status: "queued" }],
    ["a run with an unknown status", () => client?.getRun("r1"), { id: "r1", status: "paused" }],
    ["a thread that is an array", () => client?.openThread({ assistantId: "a" }), [{ id: "t" }]],
    ["a message with a numeric id", () => client?.postMessage("t1", { content: "x" }), { id: 5 }],
    [
      "a run start answered with null",
      () => client?.startRun("t1", { triggerMessageId: "m" }),
      null,
    ],
  ])("%s is a ProtocolError", async (_name, call, body) => {
    await setUp((_req, res) => sendJson(res, 200, body));
    await protocolErrorOf(call() as Promise<unknown>);
  });

  it("accepts extra fields in resources", async () => {
    const { client } = await setUp((_req, res) =>
      sendJson(res, 200, {
        id: "r1",
        status: "completed",
        output: [{ type: "text", text: "hi" }],
        extra: 1,
      }),
    );
    await expect(client.getRun("r1")).resolves.toMatchObject({ id: "r1", extra: 1 });
  });

  it("a list that is not a list is a ProtocolError; an item of the wrong shape too", async () => {
    const { client } = await setUp((req, res) =>
      req.url.startsWith("/v1/threads")
        ? sendJson(res, 200, { foo: 1 })
        : sendJson(res, 200, [{ id: 3 }]),
    );
    await protocolErrorOf(client.listThreads());
    await protocolErrorOf(client.listMessages("t1"));
  });
});

describe("list shapes", () => {
  it("follows next_cursor and reads items under `messages`", async () => {
    const { client, server } = await setUp((req, res) => {
      const after = new URL(req.url, "http://x").searchParams.get("after");
      if (after === null) sendJson(res, 200, { messages: [{ id: "m1" }], next_cursor: "p2" });
      else sendJson(res, 200, { messages: [{ id: "m2" }], next_cursor: null });
    });
    expect((await client.listMessages("t1")).map((m) => m.id)).toEqual(["m1", "m2"]);
    expect(server.received.map((r) => r.url)).toEqual([
      "/v1/thread/t1/messages?limit=400",
      "/v1/thread/t1/messages?limit=400&after=p2",
    ]);
  });

  it("never loops on a service that always says has_more with the same items", async () => {
    const { client, server } = await setUp((_req, res) =>
      sendJson(res, 200, { data: [{ id: "m1" }], has_more: true }),
    );
    await client.listMessages("t1");
    expect(server.received).toHaveLength(2);
  });

  it("stops after maxPages", async () => {
    let n = 0;
    const { client, server } = await setUp(
      (_req, res) => sendJson(res, 200, { data: [{ id: `m${n++}` }], has_more: true }),
      { messagePaging: { maxPages: 4 } },
    );
    expect(await client.listMessages("t1")).toHaveLength(4);
    expect(server.received).toHaveLength(4);
  });

  it("a call can read fewer pages than configured", async () => {
    let n = 0;
    const { client, server } = await setUp((_req, res) =>
      sendJson(res, 200, { data: [{ id: `t${n++}` }], has_more: true }),
    );
    expect(await client.listThreads({}, { maxPages: 1 })).toHaveLength(1);
    expect(server.received).toHaveLength(1);
  });

  it("returns messages oldest first when the service lists newest first", async () => {
    const { client } = await setUp((_req, res) =>
      sendJson(res, 200, [
        { id: "m2", createdAt: "2024-05-01T10:00:01Z" },
        { id: "m1", createdAt: "2024-05-01T10:00:00Z" },
      ]),
    );
    expect((await client.listMessages("t1")).map((m) => m.id)).toEqual(["m1", "m2"]);
  });

  it("encodes ids in paths", async () => {
    const { client, server } = await setUp((_req, res) =>
      sendJson(res, 200, { id: "r", status: "queued" }),
    );
    await client.getRun("a/b?c");
    expect(server.received[0]?.url).toBe("/v1/run/a%2Fb%3Fc");
  });
});

describe("stopRun", () => {
  it("sends {} and returns undefined when the answer is not a run", async () => {
    const { client, server } = await setUp((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    await expect(client.stopRun("r1")).resolves.toBeUndefined();
    expect(server.received[0]?.url).toBe("/v1/runs/r1/stop");
    expect(server.received[0]?.body).toBe("{}");
  });

  it("is retried after a 502 (stopping twice is stopping once)", async () => {
    const { client, server } = await setUp((_req, res, index) =>
      index === 0 ? sendJson(res, 502, {}) : sendJson(res, 200, { id: "r1", status: "canceled" }),
    );
    await expect(client.stopRun("r1")).resolves.toMatchObject({ status: "canceled" });
    expect(server.received).toHaveLength(2);
  });
});

describe("startRun settings", () => {
  it("refuses an invalid setting before sending", async () => {
    const { client, server } = await setUp((_req, res) => sendJson(res, 201, {}));
    await expect(
      client.startRun("t1", { triggerMessageId: "m1", maxSteps: 0 }),
    ).rejects.toBeInstanceOf(BadRequestError);
    expect(server.received).toHaveLength(0);
  });
});

describe("streamRun over a scripted stream", () => {
  it("a consumer break closes the connection", async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const { client } = await setUp((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: delta\ndata: {"text":"Hi"}\n\n');
      res.on("close", () => closed());
    });
    const seen: RunStreamUpdate[] = [];
    for await (const update of client.streamRun("r1")) {
      seen.push(update);
      if (update.type === "text") break;
    }
    expect(seen).toContainEqual({ type: "text", text: "Hi" });
    await connectionClosed;
  });

  it("a silent stream ends with idle after idleTimeoutMs, on the client's clock", async () => {
    const { client, clock } = await setUp((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
    });
    const seen: RunStreamUpdate[] = [];
    const reading = (async () => {
      for await (const update of client.streamRun("r1", { idleTimeoutMs: 50 })) seen.push(update);
    })();
    await clock.waitForTimers(1);
    await clock.advance(49);
    expect(seen).toEqual([]);
    await clock.advance(1);
    await reading;
    expect(seen.at(-1)).toEqual({ type: "end", reason: "idle" });
  });

  it("a stream that opens with 404 is a NotFoundError, not retried", async () => {
    const { client, server } = await setUp((_req, res) =>
      sendJson(res, 404, { error: { message: "no run" } }),
    );
    const iterate = async () => {
      for await (const _ of client.streamRun("r1")) {
        // nothing arrives
      }
    };
    await expect(iterate()).rejects.toThrow(/no run/);
    expect(server.received).toHaveLength(1);
  });
});
