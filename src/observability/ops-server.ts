import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { OpsRoute } from "./routes.js";

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

export interface OpsListen {
  /** Port; 0 picks a free one. */
  port: number;
  /** The address to bind (OPS_HOST): an IP, `0.0.0.0` or `::` for every interface. */
  host: string;
}

/**
 * A small HTTP server for the ops routes alone: in Socket Mode no Slack HTTP server exists
 * to carry them, and in HTTP mode (OPS_PORT) it keeps them off the public Slack port.
 * Unknown paths get 404, a known path with another method 405.
 */
export async function startOpsServer(routes: OpsRoute[], listen: OpsListen): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const matching = routes.filter((r) => r.path === path);
    const route = matching.find((r) => r.method === req.method);
    if (!route) {
      res.writeHead(matching.length > 0 ? 405 : 404, { "content-type": "text/plain" });
      res.end(matching.length > 0 ? "method not allowed\n" : "not found\n");
      return;
    }
    Promise.resolve()
      .then(() => route.handler(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
