import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_TEAM } from "../../tools/slack-events.js";
import { appMention, eventEnvelope, nextTs, slashCommand } from "../../tools/slack-requests.js";
import { CHANNEL, type Harness, startHarness, USER } from "../support/bridge-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("Socket Mode", () => {
  it("connects through SLACK_API_URL and answers a mention sent over the socket", async () => {
    h = await startHarness({ socketMode: true });
    const x = h;
    // apps.connections.open went to the fake Web API, with the app token.
    const opens = x.slack.callsTo("apps.connections.open");
    expect(opens).toHaveLength(1);
    expect(opens[0]?.hadToken).toBe(true);

    x.sim.control.enqueueAnswer({ text: "Hello over the socket." });
    const ts = nextTs();
    x.slack.seedMessage({ channel: CHANNEL, ts, user: USER, text: "<@UBOT> hi" });
    const event = eventEnvelope(
      appMention({ channel: CHANNEL, user: USER, text: "<@UBOT> hi", ts }),
    );
    const ack = await x.slack.socket.send("events_api", event);
    expect(ack.envelope_id).toBeTruthy();
    const transcript = await x.settled(CHANNEL, ts);
    expect(transcript[0]).toContain("Hello over the socket.");
    // A redelivery of the same event is answered once.
    await x.slack.socket.send("events_api", event, { retryAttempt: 1, retryReason: "timeout" });
    await x.bot.bridge.idle();
    expect(x.sim.control.counts().runs).toBe(1);
  });

  it("acknowledges an event only once the question is recorded", async () => {
    h = await startHarness({ socketMode: true });
    const x = h;
    x.slack.seedUser({ id: "U0BOB", name: "bob", real_name: "Bob" });
    const ts = nextTs();
    const text = "<@UBOT> what does <@U0BOB> think?";
    x.slack.seedMessage({ channel: CHANNEL, ts, user: USER, text });
    // Naming Bob costs the listener a users.info round trip before it records the turn.
    await x.slack.socket.send(
      "events_api",
      eventEnvelope(appMention({ channel: CHANNEL, user: USER, text, ts })),
    );
    const recorded = await x.bot.stores.turns.byMessage(DEFAULT_TEAM, CHANNEL, ts);
    expect(recorded?.content).toBe("what does @Bob think?");
    await x.settled(CHANNEL, ts);
  });

  it("answers the slash command in the socket acknowledgement, ephemerally", async () => {
    h = await startHarness({ socketMode: true });
    const ack = await h.slack.socket.send(
      "slash_commands",
      slashCommand({
        text: "model max",
        user_id: USER,
        channel_id: CHANNEL,
        response_url: h.slack.responseUrl(),
      }),
    );
    expect(ack.payload).toMatchObject({ response_type: "ephemeral" });
    expect(JSON.stringify(ack.payload)).toMatch(/max/);
  });

  it("serves health on PORT in Socket Mode", async () => {
    h = await startHarness({ socketMode: true });
    const response = await fetch(`${h.botUrl}/healthz`);
    expect(response.status).toBe(200);
  });
});
