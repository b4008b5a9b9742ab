import { App, LogLevel } from "@slack/bolt";
import { SocketModeClient } from "@slack/socket-mode";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";
import {
  type SocketModeServer,
  startSocketModeServer,
} from "../../../tools/fake-slack/socket-mode-server.js";
import { appMention, eventEnvelope, slashCommand } from "../../../tools/slack-requests.js";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fakeWithSocket(): Promise<FakeSlack> {
  const fake = await startFakeSlack({ socketMode: true });
  cleanups.push(() => fake.close());
  return fake;
}

/** A raw websocket client that records what the server sends and never acks. */
async function rawClient(
  server: SocketModeServer,
): Promise<{ received: unknown[]; receivedAtLeast: (count: number) => Promise<void> }> {
  const socket = new WebSocket(server.url());
  const received: unknown[] = [];
  socket.on("message", (data) => received.push(JSON.parse(data.toString())));
  socket.on("error", () => {}); // the server terminating it in a test is expected
  cleanups.push(() => socket.terminate());
  await new Promise((resolve) => socket.once("open", resolve));
  await server.connected();
  /** Resolves once `count` messages have arrived (a message can land after the send's timeout). */
  const receivedAtLeast = async (count: number) => {
    while (received.length < count) await new Promise((resolve) => socket.once("message", resolve));
  };
  return { received, receivedAtLeast };
}

describe("socket mode server", () => {
  it("greets a real SocketModeClient and resolves send with its ack", async () => {
    const fake = await fakeWithSocket();
    const client = new SocketModeClient({
      appToken: "xapp-1-test",
      clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } },
      logLevel: LogLevel.ERROR,
      autoReconnectEnabled: false,
    });
    const seen: Array<{ type: string; retry_num?: number; body: unknown }> = [];
    client.on("slack_event", async ({ ack, type, body, retry_num }) => {
      seen.push({ type, body, retry_num });
      await ack({ text: `got ${type}` });
    });
    await client.start();
    cleanups.push(() => client.disconnect());
    await fake.socket.connected();
    expect(fake.socket.connections).toBe(1);
    expect(fake.callsTo("apps.connections.open")).toMatchObject([{ ok: true, hadToken: true }]);

    const event = eventEnvelope(appMention({ channel: "C1", user: "U1", text: "<@UBOT> hi" }));
    const ack = await fake.socket.send("events_api", event, {
      retryAttempt: 1,
      retryReason: "timeout",
    });
    const [envelope] = fake.socket.envelopes;
    expect(envelope).toMatchObject({
      type: "events_api",
      accepts_response_payload: false,
      retry_attempt: 1,
      retry_reason: "timeout",
    });
    expect(ack).toEqual({
      envelope_id: envelope?.envelope_id,
      payload: { text: "got events_api" },
    });
    expect(seen).toEqual([{ type: "events_api", body: event, retry_num: 1 }]);

    const command = slashCommand({
      text: "help",
      user_id: "U1",
      channel_id: "C1",
      response_url: fake.responseUrl(),
    });
    const commandAck = await fake.socket.send("slash_commands", command);
    expect(fake.socket.envelopes[1]?.accepts_response_payload).toBe(true);
    expect(commandAck.payload).toEqual({ text: "got slash_commands" });
    expect(fake.socket.acks).toHaveLength(2);
  });

  it("asks clients to reconnect, and the SDK comes back through apps.connections.open", async () => {
    const fake = await fakeWithSocket();
    const client = new SocketModeClient({
      appToken: "xapp-1-test",
      clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } },
      logLevel: LogLevel.ERROR,
      clientPingTimeout: 20, // also the SDK's delay before reconnecting, in ms
    });
    await client.start();
    cleanups.push(() => client.disconnect());
    // Stop only once the client itself has seen hello again, or it is still connecting.
    const reconnected = new Promise((resolve) => client.once("connected", resolve));
    fake.socket.requestReconnect();
    await reconnected;
    expect([fake.socket.connectionsOpened, fake.socket.connections]).toEqual([2, 1]);
    expect(fake.callsTo("apps.connections.open")).toHaveLength(2);
  });

  it("sends hello on connection and rejects a send nobody acks in time", async () => {
    const server = await startSocketModeServer({ appId: "A9" });
    cleanups.push(() => server.close());
    const { received, receivedAtLeast } = await rawClient(server);
    const send = server.send("interactive", { type: "block_actions" }, { timeoutMs: 50 });
    await expect(send).rejects.toThrow(/no ack for interactive envelope .* in 50 ms/);
    await receivedAtLeast(2);
    expect(received[0]).toEqual({
      type: "hello",
      num_connections: 1,
      connection_info: { app_id: "A9" },
      debug_info: { host: "fake", approximate_connection_time: 3600 },
    });
    expect(received[1]).toMatchObject({ type: "interactive", payload: { type: "block_actions" } });
  });

  it("rejects a send when no client is connected, and pending sends on close", async () => {
    const server = await startSocketModeServer();
    cleanups.push(() => server.close());
    await expect(server.send("events_api", {})).rejects.toThrow(/no Socket Mode client/);
    await rawClient(server);
    const pending = expect(server.send("events_api", {})).rejects.toThrow(/closed before envelope/);
    await server.close();
    await pending;
  });

  it("drives a Bolt app in Socket Mode that talks to the fake Web API", async () => {
    const fake = await fakeWithSocket();
    const clientOptions = { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } };
    const app = new App({
      token: "xoxb-test",
      appToken: "xapp-1-test",
      socketMode: true,
      clientOptions,
      installerOptions: { clientOptions },
      logLevel: LogLevel.ERROR,
    });
    app.event("app_mention", async ({ event, say }) => {
      await say({ text: `echo &amp; ${event.text}`, thread_ts: event.thread_ts ?? event.ts });
    });
    await app.start();
    cleanups.push(() => app.stop());

    const mention = appMention({ channel: "C1", user: "U1", text: "<@UBOT> ping" });
    const ack = await fake.socket.send("events_api", eventEnvelope(mention));
    expect(ack.envelope_id).toBe(fake.socket.envelopes[0]?.envelope_id);
    await fake.waitFor((f) => f.callsTo("chat.postMessage").length === 1);
    expect(fake.threadTranscript("C1", mention.ts as string)).toEqual(["echo & <@UBOT> ping"]);
  });
});
