import { ErrorCode, LogLevel, WebClient } from "@slack/web-api";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../../tools/fake-slack/server.js";

const TOKEN = "xoxb-secret-value-123";

let fake: FakeSlack;
let web: WebClient;

beforeAll(async () => {
  fake = await startFakeSlack();
  web = new WebClient(TOKEN, {
    slackApiUrl: fake.apiUrl,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
  });
});
afterEach(() => {
  vi.useRealTimers();
  fake.reset();
});
afterAll(() => fake.close());

/** The error code a failing call is rejected with (the Slack `error`, or the SDK's code). */
function failure(call: Promise<unknown>): Promise<string | undefined> {
  return call.then(
    () => undefined,
    (e: { data?: { error?: string }; code?: string }) => e.data?.error ?? e.code,
  );
}

describe("Web API calls from the real WebClient", () => {
  it("answers auth.test with the bot's identity", async () => {
    const result = await web.auth.test();
    expect(result).toMatchObject({ ok: true, team_id: "T0001", user_id: "UBOT", bot_id: "BBOT" });
  });

  it("records a form-encoded post with its blocks decoded and without the token", async () => {
    const blocks = [{ type: "markdown", text: "**hi**" }];
    const result = await web.chat.postMessage({
      channel: "C1",
      text: "hi",
      blocks,
      thread_ts: "1.5",
    });
    expect(result).toMatchObject({ ok: true, channel: "C1", message: { bot_id: "BBOT" } });
    const [call] = fake.callsTo("chat.postMessage");
    expect(call).toMatchObject({ status: 200, ok: true, hadToken: true });
    expect(call?.args).toMatchObject({ channel: "C1", text: "hi", blocks, thread_ts: "1.5" });
    expect(call?.args).not.toHaveProperty("token");
    expect(JSON.stringify(fake.calls)).not.toContain(TOKEN);
    expect(fake.messages("C1")).toMatchObject([
      { ts: result.ts, thread_ts: "1.5", text: "hi", blocks, user: "UBOT", edits: 0 },
    ]);
  });

  it("accepts JSON bodies and a token in the form body", async () => {
    const json = await fetch(`${fake.apiUrl}chat.postMessage`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", authorization: "Bearer x" },
      body: JSON.stringify({ channel: "C2", text: "json", blocks: [{ type: "divider" }] }),
    });
    expect(await json.json()).toMatchObject({ ok: true, channel: "C2" });
    const form = await fetch(`${fake.apiUrl}chat.postMessage`, {
      method: "POST",
      body: new URLSearchParams({ token: "xoxb-in-body", channel: "C2", text: "form" }),
    });
    expect(await form.json()).toMatchObject({ ok: true });
    const calls = fake.callsTo("chat.postMessage");
    expect(calls.map((c) => [c.args.blocks, c.hadToken])).toEqual([
      [[{ type: "divider" }], true],
      [undefined, true],
    ]);
    expect(JSON.stringify(fake.calls)).not.toContain("xoxb-in-body");
  });

  it("answers not_authed without a token and unknown_method for what it does not know", async () => {
    const bare = await fetch(`${fake.apiUrl}auth.test`, { method: "POST" });
    expect(await bare.json()).toEqual({ ok: false, error: "not_authed" });
    expect(fake.calls[0]).toMatchObject({ hadToken: false, ok: false, error: "not_authed" });
    expect(await failure(web.apiCall("chat.frobnicate"))).toBe("unknown_method");
  });

  it("hands out increasing unique ts values that sort after seeded history", async () => {
    fake.seedMessage({ channel: "C1", ts: "9999999999.000100", user: "U1", text: "future" });
    const a = await web.chat.postMessage({ channel: "C1", text: "a" });
    const b = await web.chat.postMessage({ channel: "C1", text: "b" });
    expect(a.ts).toBe("9999999999.000101");
    expect(b.ts).toBe("9999999999.000102");
    expect(fake.messages("C1").map((m) => m.text)).toEqual(["future", "a", "b"]);
  });

  it("edits a message, keeping every version, and refuses what Slack refuses", async () => {
    const { ts } = await web.chat.postMessage({ channel: "C1", text: "…" });
    await web.chat.update({ channel: "C1", ts: ts as string, text: "one" });
    await web.chat.update({
      channel: "C1",
      ts: ts as string,
      text: "two",
      blocks: [{ type: "markdown", text: "two &amp; more" }],
    });
    const [message] = fake.messages("C1");
    expect(message).toMatchObject({ text: "two", edits: 2 });
    expect(message?.history.map((v) => v.text)).toEqual(["…", "one", "two"]);
    expect(fake.visibleText(message ?? { text: "" })).toBe("two & more");

    const update = (args: Record<string, unknown>) =>
      failure(web.apiCall("chat.update", { channel: "C1", ts, ...args }));
    expect(await update({ ts: "1.000001", text: "x" })).toBe("message_not_found");
    expect(await update({ text: "x".repeat(40_001) })).toBe("msg_too_long");
    expect(await update({ blocks: [{ type: "markdown", text: "m".repeat(12_001) }] })).toBe(
      "msg_too_long",
    );
    expect(await update({ blocks: Array(51).fill({ type: "divider" }) })).toBe("invalid_blocks");
    const bigSection = { type: "section", text: { type: "mrkdwn", text: "s".repeat(3_001) } };
    expect(await update({ blocks: [bigSection] })).toBe("invalid_blocks");
    expect(await update({ markdown_text: "m", text: "t" })).toBe("markdown_text_conflict");
    expect(fake.messages("C1")[0]?.edits).toBe(2);

    fake.seedMessage({ channel: "C1", ts: "1.000002", user: "U1", text: "theirs" });
    expect(await update({ ts: "1.000002", text: "x" })).toBe("cant_update_message");
  });

  it("posts ephemerals, deletes, links, opens views and sets thread status", async () => {
    const eph = await web.chat.postEphemeral({ channel: "C1", user: "U1", text: "only you" });
    expect(eph.message_ts).toMatch(/^\d+\.\d{6}$/);
    expect(fake.ephemerals).toMatchObject([{ channel: "C1", user: "U1", text: "only you" }]);
    expect(fake.messages("C1")).toEqual([]);

    const { ts } = await web.chat.postMessage({ channel: "C1", text: "bye" });
    const link = await web.chat.getPermalink({ channel: "C1", message_ts: ts as string });
    expect(link.permalink).toBe(
      `https://fake.slack/archives/C1/p${(ts as string).replace(".", "")}`,
    );
    await web.chat.delete({ channel: "C1", ts: ts as string });
    expect(fake.messages("C1")).toEqual([]);
    expect(await failure(web.chat.delete({ channel: "C1", ts: ts as string }))).toBe(
      "message_not_found",
    );

    const view = {
      type: "modal" as const,
      title: { type: "plain_text" as const, text: "T" },
      blocks: [],
    };
    const opened = await web.views.open({ trigger_id: "123.abc", view });
    expect(opened.view?.id).toBe(fake.views[0]?.id);
    expect(fake.views[0]).toMatchObject({ trigger_id: "123.abc", view });

    await web.assistant.threads.setStatus({
      channel_id: "D1",
      thread_ts: "1.2",
      status: "thinking",
    });
    expect(fake.statuses).toEqual([{ channel_id: "D1", thread_ts: "1.2", status: "thinking" }]);
  });

  it("answers users.info from seeded users", async () => {
    fake.seedUser({ id: "U1", name: "ada", real_name: "Ada L", display_name: "ada" });
    const info = await web.users.info({ user: "U1" });
    expect(info.user).toMatchObject({
      id: "U1",
      name: "ada",
      real_name: "Ada L",
      profile: { display_name: "ada", real_name: "Ada L" },
    });
    expect(await failure(web.users.info({ user: "U404" }))).toBe("user_not_found");
  });

  it("tells guests, people of other workspaces and Enterprise members apart in users.info", async () => {
    fake.seedUser({ id: "U2", name: "gus", is_restricted: true });
    fake.seedUser({ id: "U3", name: "uma", is_ultra_restricted: true });
    fake.seedUser({ id: "U4", name: "pat", team_id: "TPARTNER", enterprise_id: "E0PARTNER" });
    fake.seedUser({ id: "U5", name: "mem" });
    const user = async (id: string) => (await web.users.info({ user: id })).user;
    expect(await user("U2")).toMatchObject({ is_restricted: true, is_ultra_restricted: false });
    expect(await user("U3")).toMatchObject({ is_restricted: false, is_ultra_restricted: true });
    expect(await user("U4")).toMatchObject({
      team_id: "TPARTNER",
      enterprise_user: { enterprise_id: "E0PARTNER" },
    });
    const member = await user("U5");
    expect(member).toMatchObject({ team_id: "T0001", is_restricted: false });
    expect(member).not.toHaveProperty("enterprise_user");
  });

  it("names the Enterprise org in auth.test only for a workspace that has one", async () => {
    expect(await web.auth.test()).not.toHaveProperty("enterprise_id");
    const grid = await startFakeSlack({ teamId: "T0GRID", enterpriseId: "E0ORG" });
    try {
      const client = new WebClient(TOKEN, { slackApiUrl: grid.apiUrl, logLevel: LogLevel.ERROR });
      expect(await client.auth.test()).toMatchObject({ team_id: "T0GRID", enterprise_id: "E0ORG" });
    } finally {
      await grid.close();
    }
  });

  it("refuses apps.connections.open without socket mode or with a bot token", async () => {
    const app = new WebClient("xapp-1-test", {
      slackApiUrl: fake.apiUrl,
      retryConfig: { retries: 0 },
      logLevel: LogLevel.ERROR,
    });
    expect(await failure(app.apps.connections.open())).toBe("socket_mode_not_enabled");
    expect(await failure(web.apps.connections.open())).toBe("not_allowed_token_type");
    expect(await failure(app.chat.postMessage({ channel: "C1", text: "x" }))).toBe(
      "not_allowed_token_type",
    );
  });
});

describe("threads", () => {
  it("pages conversations.replies with a cursor, parent first", async () => {
    fake.seedMessage({ channel: "C1", ts: "1700000000.000100", user: "U1", text: "question" });
    fake.seedMessage({ channel: "C1", ts: "1700000000.000050", user: "U1", text: "earlier" });
    for (let i = 1; i <= 3; i++) {
      const ts = `1700000000.00020${i}`;
      fake.seedMessage({
        channel: "C1",
        ts,
        thread_ts: "1700000000.000100",
        user: "U2",
        text: `r${i}`,
      });
    }
    await web.chat.postMessage({ channel: "C1", thread_ts: "1700000000.000100", text: "bot 1" });
    await web.chat.postMessage({ channel: "C1", thread_ts: "1700000000.000100", text: "bot 2" });
    await web.chat.postMessage({ channel: "C9", thread_ts: "1700000000.000100", text: "other" });

    const texts: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await web.conversations.replies({
        channel: "C1",
        ts: "1700000000.000100",
        limit: 2,
        ...(cursor === undefined ? {} : { cursor }),
      });
      pages += 1;
      texts.push(...(page.messages ?? []).map((m) => m.text ?? ""));
      cursor = page.response_metadata?.next_cursor || undefined;
      expect(page.has_more).toBe(cursor !== undefined);
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(texts).toEqual(["question", "r1", "r2", "r3", "bot 1", "bot 2"]);

    const first = await web.conversations.replies({ channel: "C1", ts: "1700000000.000100" });
    expect(first.messages?.[0]).toMatchObject({ user: "U1", reply_count: 5 });
    expect(fake.replies("C1", "1700000000.000100").map((m) => m.text)).toEqual(["bot 1", "bot 2"]);
    expect(fake.threadTranscript("C1", "1700000000.000100")).toEqual(["bot 1", "bot 2"]);

    const bad = { channel: "C1", ts: "1700000000.000100", cursor: "bm9wZQ==" };
    expect(await failure(web.conversations.replies(bad))).toBe("invalid_cursor");
    expect(await failure(web.conversations.replies({ channel: "C1", ts: "1.000009" }))).toBe(
      "thread_not_found",
    );
  });
});

describe("fault injection", () => {
  it("fails the next calls of a method before touching state or limits", async () => {
    fake.failNext("chat.postMessage", { count: 2, status: 500 });
    fake.failNext("chat.postMessage", { status: 200, error: "channel_not_found" });
    fake.failNext("chat.update", { status: 429, retryAfter: 7 });
    const post = () => failure(web.chat.postMessage({ channel: "C1", text: "x" }));
    expect(await post()).toBe(ErrorCode.HTTPError);
    expect(await post()).toBe(ErrorCode.HTTPError);
    expect(await post()).toBe("channel_not_found");
    expect(await post()).toBeUndefined();
    expect(fake.callsTo("chat.postMessage").map((c) => [c.status, c.error])).toEqual([
      [500, "internal_error"],
      [500, "internal_error"],
      [200, "channel_not_found"],
      [200, undefined],
    ]);
    expect(fake.messages("C1")).toHaveLength(1);

    const raw = await fetch(`${fake.apiUrl}chat.update`, {
      method: "POST",
      headers: { authorization: "Bearer x" },
      body: new URLSearchParams({ channel: "C1", ts: "1.1", text: "y" }),
    });
    expect([raw.status, raw.headers.get("retry-after")]).toEqual([429, "7"]);
    expect(await raw.json()).toEqual({ ok: false, error: "ratelimited" });
    expect(fake.rateLimited).toBe(0);
  });

  it("can take the message and then answer 500, as Slack may when its answer is lost", async () => {
    fake.failNext("chat.postMessage", { status: 500, landed: true });
    fake.failNext("chat.update", { status: 500, landed: true });
    expect(await failure(web.chat.postMessage({ channel: "C1", text: "first" }))).toBe(
      ErrorCode.HTTPError,
    );
    // The caller learned nothing, yet the message is there.
    const [stored] = fake.messages("C1");
    expect(stored).toMatchObject({ text: "first", bot_id: "BBOT", edits: 0 });
    const edit = web.chat.update({ channel: "C1", ts: stored?.ts as string, text: "second" });
    expect(await failure(edit)).toBe(ErrorCode.HTTPError);
    expect(fake.messages("C1")).toMatchObject([{ text: "second", edits: 1 }]);
    expect(fake.callsTo("chat.postMessage").map((c) => [c.status, c.ok])).toEqual([[500, false]]);
    // Without `landed`, a fault still leaves the workspace untouched.
    fake.failNext("chat.postMessage", { status: 500 });
    await failure(web.chat.postMessage({ channel: "C1", text: "never" }));
    expect(fake.messages("C1")).toHaveLength(1);
  });
});

describe("message metadata", () => {
  it("keeps a post's metadata, shows it only to include_all_metadata, and replaces it on edit", async () => {
    fake.seedMessage({ channel: "C1", ts: "1700000000.000100", user: "U1", text: "question" });
    const thread = { channel: "C1", ts: "1700000000.000100" };
    const first = { event_type: "reply", event_payload: { turn: "t1", part: 0 } };
    const { ts } = await web.chat.postMessage({
      ...thread,
      thread_ts: thread.ts,
      text: "hi",
      metadata: first,
    });
    const plain = await web.conversations.replies(thread);
    expect(plain.messages?.[1]).not.toHaveProperty("metadata");
    const withMeta = await web.conversations.replies({ ...thread, include_all_metadata: true });
    expect(withMeta.messages?.[1]).toMatchObject({ ts, metadata: first });

    await web.chat.update({ channel: "C1", ts: ts as string, text: "hi again" });
    expect(fake.messages("C1")[1]?.metadata).toEqual(first);
    const second = { event_type: "reply", event_payload: { turn: "t1", part: 1 } };
    await web.chat.update({ channel: "C1", ts: ts as string, text: "hi", metadata: second });
    expect(fake.messages("C1")[1]?.metadata).toEqual(second);

    const bad = fetch(`${fake.apiUrl}chat.postMessage`, {
      method: "POST",
      headers: { authorization: "Bearer x" },
      body: new URLSearchParams({ channel: "C1", text: "x", metadata: "{not json" }),
    });
    expect(await (await bad).json()).toEqual({ ok: false, error: "invalid_metadata_format" });
  });
});

describe("response URLs", () => {
  it("records JSON posted to a handed-out URL and refuses unknown ones", async () => {
    const url = fake.responseUrl();
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${fake.port}/response/`));
    const ok = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ response_type: "ephemeral", text: "usage" }),
    });
    expect(ok.status).toBe(200);
    expect(fake.responses).toMatchObject([
      { id: url.split("/").at(-1), body: { response_type: "ephemeral", text: "usage" } },
    ]);
    const unknown = await fetch(`http://127.0.0.1:${fake.port}/response/nope`, {
      method: "POST",
      body: "{}",
    });
    expect(unknown.status).toBe(404);
  });
});

describe("waitFor", () => {
  it("resolves when a recorded call makes the predicate true", async () => {
    const waiting = fake.waitFor((f) => f.callsTo("chat.postMessage").length === 2);
    await web.chat.postMessage({ channel: "C1", text: "1" });
    await web.chat.postMessage({ channel: "C1", text: "2" });
    await expect(waiting).resolves.toBeUndefined();
  });

  it("rejects on timeout naming what it waited for and the last calls", async () => {
    await web.auth.test();
    vi.useFakeTimers();
    const waiting = fake.waitFor((f) => f.callsTo("chat.update").length > 0, 1_000);
    const settled = expect(waiting).rejects.toThrow(
      /timed out after 1000 ms waiting for .*chat\.update.*1 calls, last: \[auth\.test 200 ok\]/,
    );
    await vi.advanceTimersByTimeAsync(1_000);
    await settled;
  });

  it("rejects when the predicate throws", async () => {
    const waiting = fake.waitFor((f) => {
      if (f.calls.length > 0) throw new Error("boom");
      return false;
    });
    const settled = expect(waiting).rejects.toThrow("boom");
    await web.auth.test();
    await settled;
  });
});
