import { connect, type Socket } from "node:net";
import { Agent } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  AuthenticationError,
  BadRequestError,
  CanceledError,
  ConnectionError,
  NotFoundError,
  ProtocolError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from "../../../src/service/errors.js";
import { ServiceHttp } from "../../../src/service/http/http.js";
import type { HttpOptions } from "../../../src/service/http/http-options.js";
import type { ServiceRequest } from "../../../src/service/http/http-request.js";
import { type Clock, systemClock } from "../../../src/time.js";
import { ManualClock } from "../../support/manual-clock.js";
import { RecordingBudget } from "../fake-budget.js";
import {
  freePort,
  type LocalHandler,
  type LocalServer,
  sendJson,
  startLocalServer,
} from "../local-server.js";

const TOKEN = "secret-token-123";
const GET_RUN: ServiceRequest = { method: "GET", path: "/v1/run/r1", kind: "request" };
const POST_MESSAGE: ServiceRequest = {
  method: "POST",
  path: "/v1/thread/t1/messages",
  kind: "request",
  body: { content: "hi" },
};
const RUN = { id: "r1", status: "queued" };

let servers: LocalServer[] = [];
let cores: ServiceHttp[] = [];
/** Dispatchers given to cores, which do not close what they did not create. */
const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(cores.map((c) => c.close()));
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  cores = [];
});

async function serve(handler: LocalHandler): Promise<LocalServer> {
  const server = await startLocalServer(handler);
  servers.push(server);
  return server;
}

/** A core whose waits between retries pass at once, on a clock that starts at `start`. */
function core(baseUrl: string, extra: Partial<HttpOptions> = {}, start = 1_000_000) {
  const budget = new RecordingBudget();
  const clock = new ManualClock(start, { sleepsAdvance: true });
  const http = new ServiceHttp({
    baseUrl,
    token: TOKEN,
    budget,
    clock,
    random: () => 0.5,
    ...extra,
  });
  cores.push(http);
  return { http, budget, sleeps: clock.sleeps, clock };
}

/** Answers the scripted statuses in turn, then the run. */
function statuses(...script: (number | "reset" | "hang")[]): LocalHandler {
  return (_req, res, index) => {
    const step = script[index];
    if (step === undefined) return sendJson(res, 200, RUN);
    if (step === "reset") return void res.socket?.destroy();
    if (step === "hang") return;
    sendJson(res, step, { error: { type: "x", message: `scripted ${step}` } });
  };
}

describe("request basics", () => {
  it("sends the bearer token, accept and JSON content type under the base URL's path", async () => {
    const server = await serve((_req, res) => sendJson(res, 201, { id: "m1" }));
    const { http } = core(`${server.url}/api/`);
    await expect(http.json(POST_MESSAGE)).resolves.toEqual({ id: "m1" });
    const [req] = server.received;
    expect(req?.url).toBe("/api/v1/thread/t1/messages");
    expect(req?.method).toBe("POST");
    expect(req?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers.accept).toBe("application/json");
    expect(JSON.parse(req?.body ?? "")).toEqual({ content: "hi" });
  });

  it("puts the query in the URL and sends no content type without a body", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, []));
    const { http } = core(server.url);
    await http.json({ ...GET_RUN, query: { limit: "400", after: "a b" } });
    expect(server.received[0]?.url).toBe("/v1/run/r1?limit=400&after=a+b");
    expect(server.received[0]?.headers["content-type"]).toBeUndefined();
  });

  it("takes one budget ticket per request under a user that is not the token, and releases it", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, RUN));
    const { http, budget } = core(server.url);
    await http.json(POST_MESSAGE, { party: "U1" });
    await http.json({ ...POST_MESSAGE, kind: "run_start" });
    expect(budget.takes.map((t) => [t.kind, t.party])).toEqual([
      ["request", "U1"],
      ["run_start", undefined],
    ]);
    expect(budget.takes[0]?.user).not.toContain(TOKEN);
    expect(budget.takes[0]?.user).toBe(budget.takes[1]?.user);
    expect(budget.tickets.every((t) => t.released)).toBe(true);
  });

  it("reports the queue position while waiting in the budget", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, RUN));
    const { http, budget } = core(server.url);
    budget.queueNext({ position: 3, expectedWaitMs: 9000 });
    const seen: { position: number; expectedWaitMs: number }[] = [];
    const pending = http.json(GET_RUN, { onQueued: (p) => seen.push(p) });
    const ticket = budget.tickets[0];
    expect(seen).toEqual([{ position: 3, expectedWaitMs: 9000 }]);
    expect(server.received).toHaveLength(0);
    ticket?.advance({ position: 1, expectedWaitMs: 2000 });
    ticket?.admit();
    await expect(pending).resolves.toEqual(RUN);
    expect(seen.map((p) => p.position)).toEqual([3, 1, 0]);
    expect(ticket?.listenerCount()).toBe(0);
  });

  it("does not call onQueued when the budget admits at once", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, RUN));
    const { http } = core(server.url);
    const seen: unknown[] = [];
    await http.json(GET_RUN, { onQueued: (p) => seen.push(p) });
    expect(seen).toEqual([]);
  });

  it("a caller aborting while queued gets CanceledError and sends nothing", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, RUN));
    const { http, budget } = core(server.url);
    budget.queueNext({ position: 2, expectedWaitMs: 1000 });
    const abort = new AbortController();
    const pending = http.json(GET_RUN, { signal: abort.signal });
    abort.abort();
    await expect(pending).rejects.toBeInstanceOf(CanceledError);
    expect(server.received).toHaveLength(0);
  });

  it("an already aborted signal sends nothing", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, RUN));
    const { http, budget } = core(server.url);
    await expect(http.json(GET_RUN, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      CanceledError,
    );
    expect(budget.takes).toHaveLength(0);
    expect(server.received).toHaveLength(0);
  });

  it("aborting an in-flight request gives CanceledError, not retried", async () => {
    const server = await serve(statuses("hang"));
    const { http } = core(server.url);
    const abort = new AbortController();
    const pending = http.json(GET_RUN, { signal: abort.signal });
    while (server.received.length === 0) await new Promise((r) => setImmediate(r));
    abort.abort();
    await expect(pending).rejects.toBeInstanceOf(CanceledError);
    expect(server.received).toHaveLength(1);
  });

  it("calls onSend once the body is built, after the budget, before the request leaves", async () => {
    const seen: string[] = [];
    const server = await serve((_req, res) => {
      seen.push("received");
      sendJson(res, 200, RUN);
    });
    const { http, budget } = core(server.url);
    const body = () => {
      seen.push("body");
      return { content: "hi" };
    };
    const onSend = () => {
      seen.push(`onSend after ${budget.takes.length} take`);
    };
    await http.json({ ...POST_MESSAGE, body }, { onSend });
    expect(seen).toEqual(["body", "onSend after 1 take", "received"]);
  });

  it("calls onSend only once the connection is open, not while it is being opened", async () => {
    const seen: string[] = [];
    const server = await serve((_req, res) => {
      seen.push("received");
      sendJson(res, 200, RUN);
    });
    const opening = heldConnections();
    const { http } = core(server.url, { dispatcher: opening.agent });
    const pending = http.json(POST_MESSAGE, {
      onSend: () => {
        seen.push("onSend");
      },
    });
    await opening.requested();
    expect(seen).toEqual([]);
    opening.open();
    await expect(pending).resolves.toEqual(RUN);
    expect(seen).toEqual(["onSend", "received"]);
  });

  it("never calls onSend for a request aborted while its connection was being opened", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, RUN));
    const opening = heldConnections();
    const { http } = core(server.url, { dispatcher: opening.agent });
    const abort = new AbortController();
    const sends: string[] = [];
    const pending = http.json(POST_MESSAGE, {
      signal: abort.signal,
      onSend: () => {
        sends.push("onSend");
      },
    });
    await opening.requested();
    abort.abort();
    opening.open();
    await expect(pending).rejects.toBeInstanceOf(CanceledError);
    expect(sends).toEqual([]);
    expect(server.received).toHaveLength(0);
  });

  it("sends nothing when onSend throws, failing with CanceledError carrying its error", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, RUN));
    const { http } = core(server.url);
    const full = new Error("SQLITE_FULL: database or disk is full");
    const failure = await http
      .json(POST_MESSAGE, {
        onSend: () => {
          throw full;
        },
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CanceledError);
    expect((failure as Error).cause).toBe(full);
    expect(server.received).toHaveLength(0);
  });

  it("writes not a byte of the request until what onSend returned has resolved", async () => {
    const seen: string[] = [];
    const server = await serve((_req, res) => {
      seen.push("received");
      sendJson(res, 200, RUN);
    });
    const sockets: Socket[] = [];
    const agent = new Agent({
      connect: (options, callback) => {
        const socket = connect({ host: options.hostname, port: Number(options.port) });
        sockets.push(socket);
        socket.once("connect", () => callback(null, socket));
        socket.once("error", (error) => callback(error, null));
      },
    });
    agents.push(agent);
    const { http } = core(server.url, { dispatcher: agent });
    let recorded: () => void = () => undefined;
    const recording = new Promise<void>((resolve) => {
      recorded = resolve;
    });
    const pending = http.json(POST_MESSAGE, {
      onSend: async () => {
        seen.push("onSend");
        await recording;
        seen.push("recorded");
      },
    });
    await vi.waitFor(() => expect(seen).toEqual(["onSend"]));
    // The connection is open and the record under way: not a byte of the request, head
    // included, has been written to it.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(sockets.map((socket) => socket.bytesWritten)).toEqual([0]);
    recorded();
    await expect(pending).resolves.toEqual(RUN);
    expect(seen).toEqual(["onSend", "recorded", "received"]);
  });

  it("sends nothing when what onSend returned rejects, failing with CanceledError carrying it", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, RUN));
    const { http } = core(server.url);
    const full = new Error("the store did not answer");
    const failure = await http
      .json(POST_MESSAGE, {
        onSend: async () => {
          throw full;
        },
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CanceledError);
    expect((failure as Error).cause).toBe(full);
    expect(server.received).toHaveLength(0);
  });

  it("a non-JSON success body is a ProtocolError naming the endpoint", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>hello</html>");
    });
    const { http } = core(server.url);
    const error = await http.json(GET_RUN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toContain("GET /v1/run/r1");
  });

  it("refuses a base URL that is not http(s) and an empty token", () => {
    expect(() => new ServiceHttp({ baseUrl: "ftp://x", token: "t" })).toThrow(TypeError);
    expect(() => new ServiceHttp({ baseUrl: "http://127.0.0.1:1", token: "" })).toThrow(TypeError);
  });
});

describe("status mapping", () => {
  it.each([
    [401, AuthenticationError],
    [403, AuthenticationError],
    [404, NotFoundError],
    [400, BadRequestError],
    [409, BadRequestError],
    [422, BadRequestError],
    [500, ServerError],
    [503, ServerError],
  ])("HTTP %i → %o with the service's message, without the token", async (status, cls) => {
    const server = await serve(statuses(status, status, status, status, status));
    const { http } = core(server.url);
    const error = await http.json(POST_MESSAGE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(cls);
    expect((error as Error).message).toContain(`scripted ${status}`);
    expect((error as Error).message).not.toContain(TOKEN);
    expect((error as { status: number }).status).toBe(status);
  });
});

describe("retries", () => {
  it("a GET retries 5xx with full-jitter backoff, then succeeds", async () => {
    const server = await serve(statuses(500, 502, 503));
    const { http, budget, sleeps } = core(server.url, { retryBaseDelayMs: 100 });
    await expect(http.json(GET_RUN)).resolves.toEqual(RUN);
    expect(server.received).toHaveLength(4);
    // random() = 0.5 of min(max, base·2^n)
    expect(sleeps).toEqual([50, 100, 200]);
    expect(budget.takes).toHaveLength(4);
    expect(budget.tickets.every((t) => t.released)).toBe(true);
  });

  it("caps the backoff at retryMaxDelayMs", async () => {
    const server = await serve(statuses(500, 500, 500, 500));
    const { http, sleeps } = core(server.url, { retryBaseDelayMs: 1000, retryMaxDelayMs: 3000 });
    await http.json(GET_RUN);
    expect(sleeps).toEqual([500, 1000, 1500, 1500]);
  });

  it("after maxRetries throws the last error", async () => {
    const server = await serve(statuses(500, 500, 502));
    const { http } = core(server.url, { maxRetries: 2 });
    const error = await http.json(GET_RUN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).status).toBe(502);
    expect(server.received).toHaveLength(3);
  });

  it("a GET does not retry 4xx other than 429", async () => {
    const server = await serve(statuses(404));
    const { http } = core(server.url);
    await expect(http.json(GET_RUN)).rejects.toBeInstanceOf(NotFoundError);
    expect(server.received).toHaveLength(1);
  });

  it("429 waits Retry-After seconds and pauses the shared budget until then", async () => {
    const server = await serve((_req, res, index) => {
      if (index === 0)
        sendJson(res, 429, { error: { message: "slow down" } }, { "retry-after": "7" });
      else sendJson(res, 201, { id: "m1" });
    });
    const { http, budget, sleeps } = core(server.url);
    await expect(http.json(POST_MESSAGE)).resolves.toEqual({ id: "m1" });
    expect(server.received).toHaveLength(2);
    expect(sleeps).toEqual([7000]);
    expect(budget.pauses).toEqual([
      { user: budget.takes[0]?.user, kind: "request", untilMs: 1_000_000 + 7000 },
    ]);
  });

  it("429 with an HTTP-date Retry-After waits until that date", async () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    const server = await serve((_req, res, index) => {
      if (index === 0) {
        sendJson(res, 429, {}, { "retry-after": new Date(now + 3000).toUTCString() });
      } else sendJson(res, 200, RUN);
    });
    const { http, sleeps } = core(server.url, {}, now);
    await http.json({ ...GET_RUN, kind: "run_start" });
    expect(sleeps).toEqual([3000]);
  });

  it("tells onRateLimited about every 429, and survives an observer that throws", async () => {
    const server = await serve(statuses(429, 429));
    const seen: (number | undefined)[] = [];
    const { http } = core(server.url, {
      onRateLimited: (error) => {
        seen.push(error.retryAfter);
        throw new Error("observer broke");
      },
    });
    await expect(http.json(GET_RUN)).resolves.toEqual(RUN);
    expect(seen).toEqual([undefined, undefined]);
  });

  it("429 without Retry-After backs off, and pauses the budget a second so nobody comes straight back", async () => {
    const server = await serve(statuses(429));
    const { http, budget, sleeps } = core(server.url);
    await http.json(GET_RUN);
    expect(sleeps).toEqual([250]);
    expect(budget.pauses).toEqual([
      { user: budget.takes[0]?.user, kind: "request", untilMs: 1_000_000 + 1_000 },
    ]);
  });

  it("429 pauses the budget even when the call is not retried (its caller retries)", async () => {
    const server = await serve(statuses(429));
    const { http, budget, sleeps } = core(server.url, { maxRetries: 0 });
    await expect(http.json(GET_RUN)).rejects.toBeInstanceOf(RateLimitedError);
    expect(server.received).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(budget.pauses).toEqual([
      { user: budget.takes[0]?.user, kind: "request", untilMs: 1_000_000 + 1_000 },
    ]);
  });

  it("a POST is not retried after a 500", async () => {
    const server = await serve(statuses(500));
    const { http } = core(server.url);
    await expect(http.json(POST_MESSAGE)).rejects.toBeInstanceOf(ServerError);
    expect(server.received).toHaveLength(1);
  });

  it("a POST is not retried after a reset: ConnectionError(sent)", async () => {
    const server = await serve(statuses("reset"));
    const { http } = core(server.url);
    const error = await http.json(POST_MESSAGE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).sent).toBe(true);
    expect(server.received).toHaveLength(1);
  });

  it("a POST is retried after 429", async () => {
    const server = await serve(statuses(429));
    const { http } = core(server.url);
    await expect(http.json(POST_MESSAGE)).resolves.toEqual(RUN);
    expect(server.received).toHaveLength(2);
  });

  it("a POST is retried after ECONNREFUSED and reaches the service once", async () => {
    const port = await freePort();
    const waits: number[] = [];
    let server: LocalServer | undefined;
    // Nothing listens on the first attempt; the service comes up during the backoff.
    const clock: Clock = {
      ...systemClock,
      sleep: async (ms) => {
        waits.push(ms);
        server ??= await startLocalServer((_req, res) => sendJson(res, 201, { id: "m1" }), port);
        servers.push(server);
      },
    };
    const { http } = core(`http://127.0.0.1:${port}`, { clock });
    await expect(http.json(POST_MESSAGE)).resolves.toEqual({ id: "m1" });
    expect(waits).toHaveLength(1);
    expect(server?.received).toHaveLength(1);
  });

  it("ECONNREFUSED on every attempt ends in ConnectionError(sent=false)", async () => {
    const port = await freePort();
    const { http, budget } = core(`http://127.0.0.1:${port}`, { maxRetries: 2 });
    const error = await http.json(POST_MESSAGE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).sent).toBe(false);
    expect(budget.takes).toHaveLength(3);
  });

  it("aborting during the retry wait gives CanceledError", async () => {
    const server = await serve(statuses(500, 500));
    const abort = new AbortController();
    const clock = new ManualClock();
    const { http } = core(server.url, { clock });
    const asking = http.json(GET_RUN, { signal: abort.signal });
    await clock.waitForTimers(1);
    abort.abort();
    await expect(asking).rejects.toBeInstanceOf(CanceledError);
    expect(server.received).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });
});

/**
 * undici checks header and body timeouts on a coarse (~1 s) tick, so these tests run
 * concurrently, each with its own server and client.
 */
describe.concurrent("timeouts", () => {
  async function scoped(
    handler: LocalHandler,
    extra: Partial<HttpOptions>,
    fn: (http: ServiceHttp, server: LocalServer) => Promise<void>,
  ): Promise<void> {
    const server = await startLocalServer(handler);
    const http = new ServiceHttp({
      baseUrl: server.url,
      token: TOKEN,
      budget: new RecordingBudget(),
      clock: new ManualClock(undefined, { sleepsAdvance: true }),
      ...extra,
    });
    try {
      await fn(http, server);
    } finally {
      await http.close();
      await server.close();
    }
  }

  it("a GET retries a reset connection and a header timeout", async ({ expect }) => {
    await scoped(statuses("reset", "hang"), { headersTimeoutMs: 100 }, async (http, server) => {
      await expect(http.json(GET_RUN)).resolves.toEqual(RUN);
      expect(server.received).toHaveLength(3);
    });
  });

  it("a POST timing out is a TimeoutError and is not retried", async ({ expect }) => {
    await scoped(statuses("hang"), { headersTimeoutMs: 100 }, async (http, server) => {
      await expect(http.json(POST_MESSAGE)).rejects.toBeInstanceOf(TimeoutError);
      expect(server.received).toHaveLength(1);
    });
  });

  it("a body that stalls is a TimeoutError", async ({ expect }) => {
    const stall: LocalHandler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id":');
    };
    await scoped(stall, { bodyTimeoutMs: 100, maxRetries: 0 }, async (http) => {
      await expect(http.json(GET_RUN)).rejects.toBeInstanceOf(TimeoutError);
    });
  });
});

describe("streams", () => {
  it("opens with accept text/event-stream, releases the budget at the headers, close aborts", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
    });
    const { http, budget } = core(server.url);
    const stream = await http.openStream({ ...GET_RUN, path: "/v1/run/r1/stream" });
    expect(server.received[0]?.headers.accept).toBe("text/event-stream");
    expect(budget.tickets[0]?.released).toBe(true);
    const iterator = stream.body[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe("data: one\n\n");
    stream.close();
    await expect(iterator.next()).rejects.toThrow();
  });

  it("retries opening a GET stream after a 503", async () => {
    const server = await serve((_req, res, index) => {
      if (index === 0) return sendJson(res, 503, {});
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: x\n\n");
    });
    const { http } = core(server.url);
    const stream = await http.openStream(GET_RUN);
    const chunks: Uint8Array[] = [];
    for await (const c of stream.body) chunks.push(c);
    expect(Buffer.concat(chunks).toString()).toBe("data: x\n\n");
    expect(server.received).toHaveLength(2);
  });
});

/**
 * An undici Agent whose connections open only when told (`open()`): a request handed to it
 * waits, as behind a slow connect, until then. `requested()` resolves once one is asked for.
 */
function heldConnections() {
  const asked: (() => void)[] = [];
  const agent = new Agent({
    connect: (options, callback) => {
      asked.push(() => {
        const socket = connect({ host: options.hostname, port: Number(options.port) });
        socket.once("connect", () => callback(null, socket));
        socket.once("error", (error) => callback(error, null));
      });
    },
  });
  agents.push(agent);
  return {
    agent,
    requested: async () => {
      while (asked.length === 0) await new Promise((r) => setImmediate(r));
    },
    open: () => {
      for (const go of asked.splice(0)) go();
    },
  };
}
