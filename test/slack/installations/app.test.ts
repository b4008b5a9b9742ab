import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger as BoltLogger } from "@slack/bolt";
import { WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webClientOptions } from "../../../src/slack/installations/app.js";
import { slackWebApi } from "../../../src/slack/web-api/web-api.js";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

/** The Web API client exactly as the bot configures it (webClientOptions), against fakes. */

const silent: BoltLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => "error" as ReturnType<BoltLogger["getLevel"]>,
  setName: () => {},
};

const botClient = (apiUrl: string) =>
  slackWebApi(new WebClient("xoxb-test-token", webClientOptions(apiUrl, silent)));

let fake: FakeSlack;
beforeAll(async () => {
  fake = await startFakeSlack();
});
afterEach(() => fake.reset());
afterAll(() => fake.close());

describe("the bot's Web API client", () => {
  it("sends one HTTP request per post attempt: a 500 is not retried inside the client", async () => {
    const slack = botClient(fake.apiUrl);
    fake.failNext("chat.postMessage", { status: 500, count: 3 });
    await expect(slack.postMessage({ channel: "C1", text: "once" })).rejects.toThrow();
    expect(fake.callsTo("chat.postMessage")).toHaveLength(1);
    fake.reset();

    // Slack took this one and answered 500: sent again, it would show twice.
    fake.failNext("chat.postMessage", { status: 500, landed: true });
    await expect(slack.postMessage({ channel: "C2", text: "landed" })).rejects.toThrow();
    expect(fake.messages("C2").map((m) => m.text)).toEqual(["landed"]);
    expect(fake.callsTo("chat.postMessage")).toHaveLength(1);

    fake.failNext("chat.update", { status: 500, count: 3 });
    fake.failNext("chat.postEphemeral", { status: 500, count: 3 });
    await expect(slack.updateMessage({ channel: "C2", ts: "1.1", text: "x" })).rejects.toThrow();
    await expect(slack.postEphemeral({ channel: "C2", user: "U1", text: "x" })).rejects.toThrow();
    expect(fake.callsTo("chat.update")).toHaveLength(1);
    expect(fake.callsTo("chat.postEphemeral")).toHaveLength(1);
  });

  it("does not send a post again after the connection broke", async () => {
    let requests = 0;
    const server: Server = createServer((req) => {
      requests++;
      req.socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const slack = botClient(`http://127.0.0.1:${port}/api/`);
      await expect(slack.postMessage({ channel: "C1", text: "once" })).rejects.toThrow();
      expect(requests).toBe(1);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
