/**
 * An HTTP proxy on 127.0.0.1 that sits between the bot and a fake (the simulator or the fake
 * Slack) and breaks chosen requests in ways the fakes themselves cannot: a request that
 * never arrives, an answer that never comes back although the fake acted on the request, a
 * stream that goes silent or speaks garbage, and a server that refuses connections for a
 * while. Everything else passes through untouched.
 */
import { EventEmitter } from "node:events";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type ProxyAction =
  /** Never forwarded, never answered: the fake never sees it. */
  | "hold-request"
  /** Forwarded (the fake acts on it), but its answer is kept from the bot until `release()`. */
  | "hold-response"
  /** Forwarded; the status and headers pass, then no body bytes: the connection stays open. */
  | "stall"
  /** Forwarded; answered with the fake's status and headers but this body instead. */
  | { garbage: string };

export interface ProxyRule {
  /** Any method when unset. */
  method?: string;
  /** Matched against the path without the query. */
  path: RegExp;
  action: ProxyAction;
  /** How many matching requests the rule applies to; default every one. */
  count?: number;
}

export interface ProxiedRequest {
  method: string;
  path: string;
  action: ProxyAction | "pass";
}

export class FaultProxy {
  /** Every request seen, with what was done to it, in arrival order. */
  readonly requests: ProxiedRequest[] = [];
  /** "held" fires when a held request or held answer is in: the fault is in place. */
  readonly events = new EventEmitter<{ held: [ProxiedRequest] }>();
  private rules: { rule: ProxyRule; left: number }[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly parked = new Set<ServerResponse>();
  /** The fake's answers to held responses, sent by `release()`. */
  private readonly withheld = new Map<ServerResponse, () => void>();
  private server: Server;
  private listening = true;

  private constructor(
    server: Server,
    readonly port: number,
    private target: string,
  ) {
    this.server = server;
    this.attach(server);
  }

  static async start(target = ""): Promise<FaultProxy> {
    const server = createServer();
    await listen(server, 0);
    return new FaultProxy(server, (server.address() as AddressInfo).port, target);
  }

  /** `http://127.0.0.1:<port>`; a path prefix (e.g. `/api/`) passes through as is. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Where requests go: the fake's origin, e.g. `http://127.0.0.1:1234`. */
  setTarget(target: string): void {
    this.target = new URL(target).origin;
  }

  add(rule: ProxyRule): void {
    this.rules.push({ rule, left: rule.count ?? Number.POSITIVE_INFINITY });
  }

  /** Drops every rule; what is already held stays held. */
  clear(): void {
    this.rules = [];
  }

  /** Resolves once `count` requests have been held (counting those already held). */
  held(count = 1): Promise<void> {
    const done = () => this.requests.filter((r) => isHeld(r.action)).length >= count;
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!done()) return;
        this.events.off("held", check);
        resolve();
      };
      this.events.on("held", check);
    });
  }

  /** Sends the bot every answer held so far ("hold-response"), as the fake gave it. */
  release(): void {
    for (const [res, send] of this.withheld) {
      this.withheld.delete(res);
      this.parked.delete(res);
      send();
    }
  }

  /** Stops listening and cuts every connection: new ones are refused (ECONNREFUSED). */
  async refuse(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.dropConnections();
    await closed;
  }

  /** Listens again on the same port after `refuse()`. */
  async accept(): Promise<void> {
    if (this.listening) return;
    const server = createServer();
    this.attach(server);
    await listen(server, this.port);
    this.server = server;
    this.listening = true;
  }

  async close(): Promise<void> {
    this.clear();
    await this.refuse();
  }

  private attach(server: Server): void {
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    server.on("request", (req, res) => {
      this.handle(req, res).catch(() => res.destroy());
    });
  }

  private dropConnections(): void {
    for (const res of this.parked) res.destroy();
    this.parked.clear();
    this.withheld.clear();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  private take(method: string, path: string): ProxyAction | "pass" {
    const found = this.rules.find(
      ({ rule }) =>
        (rule.method === undefined || rule.method.toUpperCase() === method) &&
        new RegExp(rule.path.source, rule.path.flags.replace(/[gy]/g, "")).test(path),
    );
    if (!found) return "pass";
    found.left -= 1;
    if (found.left <= 0) this.rules = this.rules.filter((r) => r !== found);
    return found.rule.action;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    const method = (req.method ?? "GET").toUpperCase();
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const seen: ProxiedRequest = { method, path, action: this.take(method, path) };
    this.requests.push(seen);
    if (seen.action === "hold-request") {
      this.park(res);
      this.events.emit("held", seen);
      return;
    }
    const upstream = await this.forward(req, body);
    const { action } = seen;
    if (action === "hold-response") {
      const answer = await readAll(upstream);
      this.park(res);
      this.withheld.set(res, () => {
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        res.end(answer);
      });
      this.events.emit("held", seen);
      return;
    }
    const headers = { ...upstream.headers };
    if (typeof action === "object") {
      upstream.resume();
      delete headers["content-length"];
      res.writeHead(upstream.statusCode ?? 502, headers);
      res.end(action.garbage);
      return;
    }
    res.writeHead(upstream.statusCode ?? 502, headers);
    res.flushHeaders();
    if (action === "stall") {
      upstream.resume();
      this.park(res);
      this.events.emit("held", seen);
      return;
    }
    upstream.pipe(res);
    res.on("close", () => upstream.destroy());
  }

  /** Keeps a response open until `release()` answers it or the proxy refuses or closes (then it is cut). */
  private park(res: ServerResponse): void {
    this.parked.add(res);
    res.on("close", () => {
      this.parked.delete(res);
      this.withheld.delete(res);
    });
  }

  private forward(req: IncomingMessage, body: Buffer): Promise<IncomingMessage> {
    if (!this.target) throw new Error("fault proxy: no target set");
    const target = new URL(req.url ?? "/", this.target);
    const headers = { ...req.headers, host: target.host };
    return new Promise((resolve, reject) => {
      const out = httpRequest(target, { method: req.method, headers }, resolve);
      out.on("error", reject);
      out.end(body);
    });
  }
}

function isHeld(action: ProxiedRequest["action"]): boolean {
  return action === "hold-request" || action === "hold-response" || action === "stall";
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function startFaultProxy(target?: string): Promise<FaultProxy> {
  return FaultProxy.start(target === undefined ? "" : new URL(target).origin);
}
