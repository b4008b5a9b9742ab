import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { downloadSlackFile } from "../../src/files/download.js";

const TOKEN = "xoxb-file-test-token";
const servers: Server[] = [];
/** What each server was asked: its path and the authorization it carried. */
const seen: { host: string; path: string; authorization: string | undefined }[] = [];

afterEach(async () => {
  seen.length = 0;
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    seen.push({
      host: req.headers.host ?? "",
      path: req.url ?? "",
      authorization: req.headers.authorization,
    });
    handle(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const options = (host: string) => ({ allowedHosts: [host], maxBytes: 1_000, timeoutMs: 5_000 });

describe("downloading a shared file", () => {
  it("sends the bot token to Slack's host and reads the file", async () => {
    const host = await serve((req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(403).end();
      res.writeHead(200, { "content-type": "text/plain" }).end("hello file");
    });
    const got = await downloadSlackFile(
      `http://${host}/files-pri/T1-F1/a.txt`,
      TOKEN,
      options(host),
    );
    expect(got).toEqual({ ok: true, bytes: Buffer.from("hello file"), contentType: "text/plain" });
  });

  it("never sends the token to another host: not to a URL there, nor through a redirect", async () => {
    const elsewhere = await serve((_, res) => res.writeHead(200).end("secret place"));
    const host = await serve((_, res) =>
      res.writeHead(302, { location: `http://${elsewhere}/steal` }).end(),
    );
    expect(await downloadSlackFile(`http://${elsewhere}/f`, TOKEN, options(host))).toEqual({
      ok: false,
      reason: "off_slack",
    });
    expect(await downloadSlackFile(`http://${host}/f`, TOKEN, options(host))).toEqual({
      ok: false,
      reason: "off_slack",
    });
    expect(seen.filter((r) => r.host === elsewhere)).toEqual([]);
  });

  it("follows a redirect within Slack's host, with the token", async () => {
    const host = await serve((req, res) => {
      if (req.url === "/first") return void res.writeHead(302, { location: "/second" }).end();
      res.writeHead(200, { "content-type": "text/csv" }).end("a,b");
    });
    const got = await downloadSlackFile(`http://${host}/first`, TOKEN, options(host));
    expect(got).toMatchObject({ ok: true, contentType: "text/csv" });
    expect(seen.map((r) => [r.path, r.authorization])).toEqual([
      ["/first", `Bearer ${TOKEN}`],
      ["/second", `Bearer ${TOKEN}`],
    ]);
  });

  it("takes Slack's sign-in page for a refusal, unless the file is HTML itself", async () => {
    const host = await serve((_, res) =>
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end("<html>Sign in</html>"),
    );
    expect(await downloadSlackFile(`http://${host}/f`, TOKEN, options(host))).toEqual({
      ok: false,
      reason: "not_allowed",
    });
    const page = await downloadSlackFile(`http://${host}/f`, TOKEN, {
      ...options(host),
      html: true,
    });
    expect(page).toMatchObject({ ok: true, contentType: "text/html; charset=utf-8" });
  });

  it("stops reading a file over the limit, whether or not its length is announced", async () => {
    const host = await serve((req, res) => {
      if (req.url === "/announced") {
        res.writeHead(200, { "content-length": "5000", "content-type": "text/plain" });
        return void res.end("x".repeat(5_000));
      }
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < 5; i++) res.write("y".repeat(600));
      res.end();
    });
    for (const path of ["/announced", "/streamed"]) {
      expect(await downloadSlackFile(`http://${host}${path}`, TOKEN, options(host))).toEqual({
        ok: false,
        reason: "too_large",
      });
    }
  });

  it("gives up when the download takes longer than its limit", async () => {
    const host = await serve(() => undefined);
    const got = await downloadSlackFile(`http://${host}/never`, TOKEN, {
      ...options(host),
      timeoutMs: 200,
    });
    expect(got).toEqual({ ok: false, reason: "timeout" });
  });

  it("refuses plain HTTP anywhere but 127.0.0.1, and what is not HTTP", async () => {
    const hosts = ["files.slack.com"];
    const limits = { allowedHosts: hosts, maxBytes: 10, timeoutMs: 1_000 };
    expect(await downloadSlackFile("http://files.slack.com/f", TOKEN, limits)).toEqual({
      ok: false,
      reason: "off_slack",
    });
    expect(await downloadSlackFile("file:///etc/passwd", TOKEN, limits)).toEqual({
      ok: false,
      reason: "off_slack",
    });
  });
});
