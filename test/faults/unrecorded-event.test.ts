/**
 * A question the bot cannot record (the database refuses the write) must not be
 * acknowledged: Slack then delivers it again, and the redelivery is answered once.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  appMention,
  DEFAULT_TEAM,
  eventEnvelope,
  nextTs,
  type Payload,
} from "../../tools/slack-requests.js";
import { CHANNEL, type Harness, startHarness, USER } from "../support/bridge-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

/** The next turn the bot records fails as a full disk makes SQLite fail. */
function failNextRecord(x: Harness): void {
  vi.spyOn(x.bot.stores.turns, "record").mockImplementationOnce(() => {
    throw new Database.SqliteError("database or disk is full", "SQLITE_FULL");
  });
}

/** A mention seeded in the fake Slack, as the event envelope Slack delivers (and redelivers). */
function mentionEvent(x: Harness, text: string): { ts: string; event: Payload } {
  const ts = nextTs();
  x.slack.seedMessage({ channel: CHANNEL, ts, user: USER, text });
  return { ts, event: eventEnvelope(appMention({ channel: CHANNEL, user: USER, text, ts })) };
}

const turnOf = async (x: Harness, ts: string) =>
  await x.bot.stores.turns.byMessage(DEFAULT_TEAM, CHANNEL, ts);

describe("a question that cannot be recorded", () => {
  it("HTTP mode: answers 500 so Slack retries, and the retry is answered once", async () => {
    h = await startHarness();
    const x = h;
    failNextRecord(x);
    x.sim.control.enqueueAnswer({ text: "Recorded on the retry." });
    const { ts, event } = mentionEvent(x, "<@UBOT> will you remember?");

    const first = await x.post("event", event);
    expect(first.status).toBe(500);
    expect(await turnOf(x, ts)).toBeUndefined();

    const retry = await x.post("event", event, { retryNum: 1, retryReason: "http_error" });
    expect(retry.status).toBe(200);
    const again = await x.post("event", event, { retryNum: 2, retryReason: "http_timeout" });
    expect(again.status).toBe(200);
    const transcript = await x.settled(CHANNEL, ts);
    expect(transcript).toEqual([expect.stringContaining("Recorded on the retry.")]);
    expect(x.sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("HTTP mode: answers 500 when a lookup on the way to the record fails, and the retry is answered once", async () => {
    h = await startHarness();
    const x = h;
    // The database out of reach for the count of the person's waiting questions, read before
    // the names of the people a message mentions are looked up.
    vi.spyOn(x.bot.bridge, "overLimit").mockRejectedValueOnce(
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
    );
    x.sim.control.enqueueAnswer({ text: "Answered after the lookup failed." });
    const { ts, event } = mentionEvent(x, "<@UBOT> is <@U0BOB> there?");

    const first = await x.post("event", event);
    expect(first.status).toBe(500);
    expect(await turnOf(x, ts)).toBeUndefined();
    const retry = await x.post("event", event, { retryNum: 1, retryReason: "http_error" });
    expect(retry.status).toBe(200);
    const transcript = await x.settled(CHANNEL, ts);
    expect(transcript).toEqual([expect.stringContaining("Answered after the lookup failed.")]);
    expect(x.sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("HTTP mode: answers 500 when the record cannot be brought to the disk, and the question is answered once", async () => {
    h = await startHarness();
    const x = h;
    // Recorded, but the log's sync fails (a disk error): Slack must not be told it arrived.
    vi.spyOn(x.bot.stores, "durable").mockRejectedValueOnce(
      Object.assign(new Error("input/output error"), { code: "EIO" }),
    );
    x.sim.control.enqueueAnswer({ text: "Answered once." });
    const { ts, event } = mentionEvent(x, "<@UBOT> is it on the disk?");

    const first = await x.post("event", event);
    expect(first.status).toBe(500);
    const retry = await x.post("event", event, { retryNum: 1, retryReason: "http_error" });
    expect(retry.status).toBe(200);
    const transcript = await x.settled(CHANNEL, ts);
    expect(transcript).toEqual([expect.stringContaining("Answered once.")]);
    expect(x.sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
  });

  it("Socket Mode: withholds the ack so Slack sends it again, and the redelivery is answered once", async () => {
    h = await startHarness({ socketMode: true });
    const x = h;
    const { socket } = x.slack;
    failNextRecord(x);
    x.sim.control.enqueueAnswer({ text: "Recorded on redelivery." });
    const { ts, event } = mentionEvent(x, "<@UBOT> are you listening?");

    // Never acknowledged: the fake rejects it when it gives up waiting or closes.
    const first = socket.send("events_api", event).catch(() => undefined);
    await vi.waitFor(() =>
      expect(x.logs.some((l) => l.includes("Slack listener failed"))).toBe(true),
    );
    const firstId = socket.envelopes.at(-1)?.envelope_id;
    expect(await turnOf(x, ts)).toBeUndefined();

    // Acks come back in order on the one connection: once the redelivery's is in, an ack of
    // the first envelope would be too.
    const redelivered = await socket.send("events_api", event, {
      retryAttempt: 1,
      retryReason: "timeout",
    });
    expect(redelivered.envelope_id).not.toBe(firstId);
    expect(socket.acks.map((a) => a.envelope_id)).not.toContain(firstId);
    const transcript = await x.settled(CHANNEL, ts);
    expect(transcript).toEqual([expect.stringContaining("Recorded on redelivery.")]);
    expect(x.sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    void first;
  });
});
