import { ErrorCode, LogLevel, WebClient } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, RateLimits } from "../../../tools/fake-slack/limits.js";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

const T0 = 1_700_000_000_000;

describe("RateLimits", () => {
  it("follows Slack's tiers", () => {
    expect(DEFAULT_LIMITS["chat.update"]).toBe(50);
    expect(DEFAULT_LIMITS["conversations.replies"]).toBe(50);
    expect(DEFAULT_LIMITS["users.info"]).toBe(100);
    expect(DEFAULT_LIMITS["apps.connections.open"]).toBe(20);
    expect(new RateLimits().limitOf("unknown.method")).toBeUndefined();
  });

  it("slides a 60 s window and answers the whole seconds until the oldest call leaves it", () => {
    const limits = new RateLimits({ limits: { "users.info": 2 } });
    expect(limits.take("users.info", undefined, T0)).toEqual({ allowed: true });
    expect(limits.take("users.info", undefined, T0 + 10_500)).toEqual({ allowed: true });
    expect(limits.take("users.info", undefined, T0 + 20_000)).toEqual({
      allowed: false,
      retryAfterSec: 40,
    });
    // Refused calls do not count: the first call leaves the window at T0 + 60 s.
    expect(limits.take("users.info", undefined, T0 + 59_999)).toEqual({
      allowed: false,
      retryAfterSec: 1,
    });
    expect(limits.take("users.info", undefined, T0 + 60_000)).toEqual({ allowed: true });
  });

  it("gives each channel a post bucket of postBurst refilling one per second", () => {
    const limits = new RateLimits({ postBurst: 2 });
    expect(limits.take("chat.postMessage", "C1", T0).allowed).toBe(true);
    expect(limits.take("chat.postMessage", "C1", T0).allowed).toBe(true);
    expect(limits.take("chat.postMessage", "C1", T0 + 400)).toEqual({
      allowed: false,
      retryAfterSec: 1,
    });
    expect(limits.take("chat.postMessage", "C2", T0 + 400).allowed).toBe(true);
    expect(limits.take("chat.postMessage", "C1", T0 + 1_000).allowed).toBe(true);
    expect(limits.take("chat.postMessage", "C1", T0 + 1_000).allowed).toBe(false);
  });
});

describe("fake Slack rate limits over HTTP", () => {
  let fake: FakeSlack | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  const client = (f: FakeSlack, rejectRateLimitedCalls = true) =>
    new WebClient("xoxb-test", {
      slackApiUrl: f.apiUrl,
      rejectRateLimitedCalls,
      retryConfig: { retries: 0 },
      logLevel: LogLevel.ERROR,
    });

  it("answers the 51st chat.update in a minute with 429, Retry-After and ratelimited", async () => {
    let now = T0;
    fake = await startFakeSlack({ now: () => now });
    const posted = await client(fake).chat.postMessage({ channel: "C1", text: "…" });
    const ts = posted.ts as string;
    for (let i = 0; i < 50; i++) {
      now = T0 + i * 100;
      await client(fake).chat.update({ channel: "C1", ts, text: `edit ${i}` });
    }
    now = T0 + 5_000;
    const body = new URLSearchParams({ channel: "C1", ts, text: "edit 51" });
    const raw = await fetch(`${fake.apiUrl}chat.update`, {
      method: "POST",
      headers: { authorization: "Bearer xoxb-test" },
      body,
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get("retry-after")).toBe("55");
    expect(await raw.json()).toEqual({ ok: false, error: "ratelimited" });
    expect(fake.rateLimited).toBe(1);
    expect(fake.rateLimitedFor("chat.update")).toBe(1);
    expect(fake.messages("C1")[0]?.text).toBe("edit 49");

    now = T0 + 60_000; // the first edit has left the window
    await expect(
      client(fake).chat.update({ channel: "C1", ts, text: "later" }),
    ).resolves.toMatchObject({ ok: true });
  });

  it("makes a WebClient with rejectRateLimitedCalls throw a rate-limited error", async () => {
    fake = await startFakeSlack({ now: () => T0, limits: { "users.info": 1 } });
    fake.seedUser({ id: "U1", name: "ada" });
    const web = client(fake);
    await web.users.info({ user: "U1" });
    const error = await web.users.info({ user: "U1" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: ErrorCode.RateLimitedError, retryAfter: 60 });
    expect(fake.callsTo("users.info").map((c) => c.status)).toEqual([200, 429]);
  });

  it("limits posts per channel and per workspace", async () => {
    let now = T0;
    fake = await startFakeSlack({ now: () => now, limits: { "chat.postMessage": 5 } });
    const web = client(fake);
    const post = (channel: string) =>
      web.chat.postMessage({ channel, text: "hi" }).then(
        () => "ok",
        (e: { code?: string }) => e.code,
      );
    expect([await post("C1"), await post("C1"), await post("C1"), await post("C1")]).toEqual([
      "ok",
      "ok",
      "ok",
      ErrorCode.RateLimitedError,
    ]);
    expect(await post("C2")).toBe("ok");
    now += 1_000;
    expect(await post("C1")).toBe("ok");
    expect(await post("C3")).toBe(ErrorCode.RateLimitedError); // 6th post in the minute
    expect(fake.rateLimitedFor("chat.postMessage")).toBe(2);
    expect(fake.messages("C1")).toHaveLength(4);
  });

  it("never answers 429 with enforceLimits false", async () => {
    fake = await startFakeSlack({ now: () => T0, enforceLimits: false, postBurst: 1 });
    const web = client(fake);
    for (let i = 0; i < 5; i++) await web.chat.postMessage({ channel: "C1", text: `${i}` });
    expect(fake.rateLimited).toBe(0);
    expect(fake.messages("C1")).toHaveLength(5);
  });
});
