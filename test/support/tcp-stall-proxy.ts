/**
 * A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL here) that can stall: while
 * stalled, it forwards nothing either way and accepts new connections without serving them,
 * as a failover, a lock storm or a saturated link would; `resume()` lets everything through
 * again, what was held included. Nothing is lost or reordered. It can also go down: `cut()`
 * ends every connection and refuses new ones until `resume()`, as a server that restarts.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface StallProxy {
  /** `host:port` to connect to instead of the server. */
  address: string;
  stall(): void;
  /** Ends every connection, and ends each new one at once, until resume(). */
  cut(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startStallProxy(target: { host: string; port: number }): Promise<StallProxy> {
  const links = new Set<Link>();
  let stalled = false;
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    const link = new Link(client, upstream);
    links.add(link);
    if (stalled) link.stall();
    const end = () => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    stall() {
      stalled = true;
      for (const link of links) link.stall();
    },
    cut() {
      down = true;
      for (const link of links) link.destroy();
    },
    resume() {
      stalled = false;
      down = false;
      for (const link of links) link.resume();
    },
    async close() {
      for (const link of links) link.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One connection through the proxy: bytes forwarded each way, or held while stalled. */
class Link {
  #stalled = false;
  readonly #held: [Socket, Buffer][] = [];

  constructor(
    private readonly client: Socket,
    private readonly upstream: Socket,
  ) {
    client.on("data", (bytes: Buffer) => this.#forward(upstream, bytes));
    upstream.on("data", (bytes: Buffer) => this.#forward(client, bytes));
  }

  stall(): void {
    this.#stalled = true;
  }

  resume(): void {
    this.#stalled = false;
    for (const [to, bytes] of this.#held.splice(0)) to.write(bytes);
  }

  destroy(): void {
    this.client.destroy();
    this.upstream.destroy();
  }

  #forward(to: Socket, bytes: Buffer): void {
    if (this.#stalled) this.#held.push([to, bytes]);
    else to.write(bytes);
  }
}
