import { describe, expect, it } from "vitest";
import {
  type HistoryClient,
  HistoryReadError,
  SlackThreadHistory,
} from "../../src/slack/thread-history.js";
import { UserDirectory } from "../../src/slack/user-directory.js";
import { readRepliesPage } from "../../src/slack/web-api-responses.js";
import { ManualClock } from "../support/manual-clock.js";

const THREAD = "1700000000.000000";
type RepliesArgs = Parameters<HistoryClient["replies"]>[0];

/** A clock that only moves when the code under test sleeps. */
const virtualTime = () => new ManualClock(1_000_000, { sleepsAdvance: true });

function fakeClient(pages: unknown[][], faults: unknown[] = []) {
  const calls: RepliesArgs[] = [];
  const client: HistoryClient = {
    async replies(args) {
      calls.push(args);
      const fault = faults.shift();
      if (fault) throw fault;
      const index = args.cursor === undefined ? 0 : Number(args.cursor.slice("page".length));
      const next = index + 1 < pages.length ? `page${index + 1}` : "";
      // What Slack sends, read as the bot's Web API adapter reads it.
      return readRepliesPage({
        ok: true,
        messages: pages[index] ?? [],
        has_more: next !== "",
        response_metadata: { next_cursor: next },
      });
    },
    whoAmI: async () => ({ userId: "UBOT", botId: "BBOT" }),
  };
  return { client, calls };
}

const names: Record<string, string> = { U1: "Alice", U2: "Bob" };
const directory = () =>
  new UserDirectory({ lookup: async (id) => (names[id] ? { displayName: names[id] } : undefined) });

const request = { team: "T", channel: "C1", threadTs: THREAD, after: null, asker: "U1" };

describe("SlackThreadHistory", () => {
  it("reads every page by cursor and makes the messages readable, by display name", async () => {
    const { client, calls } = fakeClient([
      [
        { ts: THREAD, user: "U2", text: "hi <@U1>, see <https://x.test|the doc> &amp; more" },
        { ts: "1700000001.000000", user: "UBOT", bot_id: "BBOT", text: "my own reply" },
      ],
      [
        { ts: "1700000002.000000", subtype: "channel_join", user: "U3", text: "joined" },
        { ts: "1700000003.000000", user: "U9", text: "", files: [{ name: "plan.pdf" }] },
        {
          ts: "1700000004.000000",
          bot_id: "B7",
          username: "CI",
          subtype: "bot_message",
          text: "red",
        },
      ],
    ]);
    const clock = virtualTime();
    const history = new SlackThreadHistory({ client, users: directory(), pageSize: 2, clock });
    const { messages, askerName } = await history.read(request);
    expect(askerName).toBe("Alice");
    expect(calls.map((c) => [c.limit, c.cursor])).toEqual([
      [2, undefined],
      [2, "page1"],
    ]);
    expect(messages).toEqual([
      {
        ts: THREAD,
        author: "Bob",
        text: "hi @Alice, see the doc (https://x.test) & more",
        files: [],
        bySelf: false,
      },
      { ts: "1700000001.000000", author: "UBOT", text: "", files: [], bySelf: true },
      { ts: "1700000003.000000", author: "U9", text: "", files: ["plan.pdf"], bySelf: false },
      { ts: "1700000004.000000", author: "CI", text: "red", files: [], bySelf: false },
    ]);
  });

  it("asks only for what came after the point already passed on", async () => {
    const { client, calls } = fakeClient([[{ ts: THREAD, user: "U2", text: "x" }]]);
    const history = new SlackThreadHistory({ client, users: directory(), clock: virtualTime() });
    await history.read({ ...request, after: "1700000005.000000" });
    expect(calls[0]).toMatchObject({ oldest: "1700000005.000000", inclusive: false });
  });

  it("waits out a 429 for its Retry-After and asks for the same page again", async () => {
    const limited = { code: "slack_webapi_rate_limited_error", retryAfter: 7 };
    const { client, calls } = fakeClient([[{ ts: THREAD, user: "U2", text: "x" }]], [limited]);
    const t = virtualTime();
    const history = new SlackThreadHistory({ client, users: directory(), clock: t });
    const { messages } = await history.read(request);
    expect(messages).toHaveLength(1);
    expect(calls).toHaveLength(2);
    expect(t.sleeps).toContain(7_000);
  });

  it("spaces its calls within the method's tier", async () => {
    const pages = Array.from({ length: 8 }, (_, i) => [
      { ts: `${1700000000 + i}.000000`, user: "U2", text: `m${i}` },
    ]);
    const { client, calls } = fakeClient(pages);
    const t = virtualTime();
    const history = new SlackThreadHistory({
      client,
      users: directory(),
      perMinute: 30,
      burst: 2,
      deadlineMs: 600_000,
      clock: t,
    });
    const { messages } = await history.read(request);
    expect(messages).toHaveLength(8);
    expect(calls).toHaveLength(8);
    // Two back to back, then one every 2 s (30 a minute).
    expect(t.sleeps).toEqual([2_000, 2_000, 2_000, 2_000, 2_000, 2_000]);
  });

  it("fails clearly: a refused call, a thread too long, a deadline passed", async () => {
    const refused = { code: "slack_webapi_platform_error", data: { error: "missing_scope" } };
    const a = fakeClient([[]], [refused]);
    await expect(
      new SlackThreadHistory({ client: a.client, users: directory(), clock: virtualTime() }).read(
        request,
      ),
    ).rejects.toThrow(/missing_scope/);

    const long = fakeClient(Array.from({ length: 5 }, () => [{ ts: THREAD, text: "x" }]));
    const tooLong = new SlackThreadHistory({
      client: long.client,
      users: directory(),
      maxPages: 3,
      clock: virtualTime(),
    });
    await expect(tooLong.read(request)).rejects.toBeInstanceOf(HistoryReadError);
    expect(long.calls).toHaveLength(3);

    const limited = { code: "slack_webapi_rate_limited_error", retryAfter: 60 };
    const slow = fakeClient([[]], [limited]);
    const timed = new SlackThreadHistory({
      client: slow.client,
      users: directory(),
      deadlineMs: 10_000,
      clock: virtualTime(),
    });
    await expect(timed.read(request)).rejects.toThrow(/took too long/);
  });

  it("does not read a DM: every message there is answered, nothing lies in between", async () => {
    const { client, calls } = fakeClient([[{ ts: THREAD, user: "U2", text: "x" }]]);
    let lookups = 0;
    const users = new UserDirectory({
      lookup: async () => {
        lookups++;
        return { displayName: "Alice" };
      },
    });
    const history = new SlackThreadHistory({ client, users, clock: virtualTime() });
    const { messages } = await history.read({ ...request, channel: "D0DM" });
    expect(messages).toEqual([]);
    expect(calls).toEqual([]);
    expect(lookups).toBe(0);
  });
});
