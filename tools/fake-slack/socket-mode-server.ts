/**
 * A local Socket Mode endpoint: the websocket Slack would hand out from
 * `apps.connections.open`. It greets each client with `hello`, sends envelopes and
 * resolves each send with the client's acknowledgement.
 */
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type RawData, type WebSocket, WebSocketServer } from "ws";

export type EnvelopeType = "events_api" | "slash_commands" | "interactive";

export interface SendOptions {
  /** `retry_attempt` of the envelope. Default 0. */
  retryAttempt?: number;
  /** `retry_reason` of the envelope. Default "". */
  retryReason?: string;
  /** Default true for slash commands and interactivity, false for events. */
  acceptsResponsePayload?: boolean;
  /** How long to wait for the ack before rejecting, in ms. Default: the server's. */
  timeoutMs?: number;
  /**
   * Which open connection gets it, oldest first (Slack delivers each payload to one of the
   * app's connections: several replicas each hold one). Default: the newest.
   */
  connection?: number;
}

export interface Envelope {
  envelope_id: string;
  type: EnvelopeType;
  payload: unknown;
  accepts_response_payload: boolean;
  retry_attempt: number;
  retry_reason: string;
}

export interface Ack {
  envelope_id: string;
  payload?: unknown;
}

export interface SocketModeServerOptions {
  /** `connection_info.app_id` in the hello message. Default "A1". */
  appId?: string;
  /** Default ack timeout of {@link SocketModeServer.send}, in ms. Default 3000 (Slack's). */
  ackTimeoutMs?: number;
  /** How often the server pings clients, in ms; the SDK reconnects after 30 s without. Default 10000. */
  pingIntervalMs?: number;
  /** Called after a client connects or leaves and after every ack (the fake re-checks `waitFor`). */
  onActivity?: () => void;
}

interface Pending {
  resolve: (ack: Ack) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class SocketModeServer {
  /** Envelopes sent, in order. */
  readonly envelopes: Envelope[] = [];
  /** Acks received, in order. */
  readonly acks: Ack[] = [];
  private readonly open = new Set<WebSocket>();
  /** The newest connection last: envelopes go to it, as Slack picks one connection. */
  private readonly order: WebSocket[] = [];
  private readonly pending = new Map<string, Pending>();
  private readonly connectWaiters: Array<() => void> = [];
  private readonly idleWaiters: Array<() => void> = [];
  /** Connections accepted since start, closed ones included (reconnects show here). */
  private accepted = 0;
  private readonly pinger: NodeJS.Timeout;
  private closed = false;

  private constructor(
    private readonly wss: WebSocketServer,
    private readonly options: Required<SocketModeServerOptions>,
  ) {
    wss.on("connection", (socket) => this.accept(socket));
    this.pinger = setInterval(() => {
      for (const socket of this.open) socket.ping();
    }, options.pingIntervalMs);
    this.pinger.unref();
  }

  static async start(options: SocketModeServerOptions = {}): Promise<SocketModeServer> {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve, reject) => {
      wss.once("listening", resolve);
      wss.once("error", reject);
    });
    return new SocketModeServer(wss, {
      appId: options.appId ?? "A1",
      ackTimeoutMs: options.ackTimeoutMs ?? 3000,
      pingIntervalMs: options.pingIntervalMs ?? 10_000,
      onActivity: options.onActivity ?? (() => {}),
    });
  }

  get port(): number {
    return (this.wss.address() as AddressInfo).port;
  }

  /** Open connections right now. */
  get connections(): number {
    return this.open.size;
  }

  /** Connections accepted since start, closed ones included. */
  get connectionsOpened(): number {
    return this.accepted;
  }

  /** A connection URL with a fresh ticket, as `apps.connections.open` returns it. */
  url(): string {
    return `ws://127.0.0.1:${this.port}/link/?ticket=${randomUUID()}&app_id=${this.options.appId}`;
  }

  /** Resolves once a client is connected and greeted (at once if one already is). */
  connected(): Promise<void> {
    if (this.open.size > 0) return Promise.resolve();
    return new Promise((resolve) => this.connectWaiters.push(resolve));
  }

  /** Resolves once no client is connected (at once if none is). */
  disconnected(): Promise<void> {
    if (this.open.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Sends an envelope to one connection (the newest) and resolves with the client's ack. */
  send(type: EnvelopeType, payload: unknown, opts: SendOptions = {}): Promise<Ack> {
    const socket = opts.connection === undefined ? this.order.at(-1) : this.order[opts.connection];
    if (socket === undefined) {
      return Promise.reject(new Error(`cannot send ${type}: no Socket Mode client is connected`));
    }
    const envelope: Envelope = {
      envelope_id: randomUUID(),
      type,
      payload,
      accepts_response_payload: opts.acceptsResponsePayload ?? type !== "events_api",
      retry_attempt: opts.retryAttempt ?? 0,
      retry_reason: opts.retryReason ?? "",
    };
    const timeoutMs = opts.timeoutMs ?? this.options.ackTimeoutMs;
    return new Promise<Ack>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(envelope.envelope_id);
        reject(new Error(`no ack for ${type} envelope ${envelope.envelope_id} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(envelope.envelope_id, { resolve, reject, timer });
      this.envelopes.push(envelope);
      socket.send(JSON.stringify(envelope));
    });
  }

  /** Asks every client to reconnect, as Slack does before recycling a connection. */
  requestReconnect(reason = "refresh_requested"): void {
    const message = JSON.stringify({ type: "disconnect", reason, debug_info: { host: "fake" } });
    for (const socket of this.open) socket.send(message);
  }

  /**
   * Rejects sends still waiting for an ack, closes every connection (a close handshake of
   * at most `graceMs`, default 500, then termination) and stops listening.
   */
  async close(graceMs = 500): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pinger);
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`socket mode server closed before envelope ${id} was acked`));
    }
    this.pending.clear();
    // A handshake rather than a bare termination, so clients close without logging errors.
    for (const socket of this.wss.clients) socket.close(1001, "server closing");
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      this.disconnected(),
      new Promise((resolve) => {
        grace = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(grace);
    for (const socket of this.wss.clients) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(socket: WebSocket): void {
    this.open.add(socket);
    this.order.push(socket);
    this.accepted += 1;
    socket.on("message", (data) => this.receive(data));
    // A client vanishing mid-frame is the client's problem, not a crash of the test run.
    socket.on("error", () => socket.terminate());
    socket.on("close", () => {
      this.open.delete(socket);
      const index = this.order.indexOf(socket);
      if (index >= 0) this.order.splice(index, 1);
      if (this.open.size === 0) for (const waiter of this.idleWaiters.splice(0)) waiter();
      this.options.onActivity();
    });
    socket.send(
      JSON.stringify({
        type: "hello",
        num_connections: this.open.size,
        connection_info: { app_id: this.options.appId },
        debug_info: { host: "fake", approximate_connection_time: 3600 },
      }),
    );
    for (const waiter of this.connectWaiters.splice(0)) waiter();
    this.options.onActivity();
  }

  private receive(data: RawData): void {
    let message: unknown;
    try {
      message = JSON.parse(data.toString());
    } catch {
      return;
    }
    if (typeof message !== "object" || message === null || !("envelope_id" in message)) return;
    const { envelope_id: id } = message;
    if (typeof id !== "string") return;
    const ack: Ack = { envelope_id: id };
    if ("payload" in message) ack.payload = message.payload;
    this.acks.push(ack);
    const pending = this.pending.get(id);
    if (pending !== undefined) {
      this.pending.delete(id);
      clearTimeout(pending.timer);
      pending.resolve(ack);
    }
    this.options.onActivity();
  }
}

export function startSocketModeServer(
  options: SocketModeServerOptions = {},
): Promise<SocketModeServer> {
  return SocketModeServer.start(options);
}
