import { afterEach, describe, expect, it } from "vitest";
import { Bridge } from "../../src/bridge/bridge.js";
import type { Inbound } from "../../src/bridge/inbound.js";
import { Relay } from "../../src/bridge/turn/relay.js";
import { TurnContent } from "../../src/bridge/turn/turn-content.js";
import { TurnRunner } from "../../src/bridge/turn/turn-runner.js";
import { ServiceBudget } from "../../src/budgets/service/budget.js";
import { ServiceClient } from "../../src/service/client.js";
import { OVER_LIMIT_NOTE } from "../../src/slack/receiving/listeners.js";
import { memoryStores } from "../../src/store/in-memory.js";
import { systemClock } from "../../src/time.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import { appMention } from "../../tools/slack-requests.js";
import { CHANNEL, type Harness, startHarness } from "../support/bridge-harness.js";
import { FakeReplies } from "../support/fake-replies.js";

let h: Harness | undefined;
let sim: RunningSimulator | undefined;
let client: ServiceClient | undefined;

afterEach(async () => {
  await h?.close();
  await client?.close();
  await sim?.close();
  h = undefined;
  client = undefined;
  sim = undefined;
});

const FLOODER = "U0FLOOD";
const OTHER = "U0OTHER";

describe("one person flooding the bot", () => {
  it("gets a note past MAX_QUEUED_TURNS_PER_PERSON, and the others are still served", async () => {
    h = await startHarness({ env: { MAX_QUEUED_TURNS_PER_PERSON: "2" } });
    h.sim.control.setDefaultAnswer({ text: "Thinking for ever", hang: true });
    await h.mention("<@UBOT> one", { user: FLOODER });
    await h.mention("<@UBOT> two", { user: FLOODER });
    const third = await h.mention("<@UBOT> three", { user: FLOODER });
    const other = await h.mention("<@UBOT> my turn?", { user: OTHER });
    const x = h;
    await x.slack.waitFor(() => x.sim.control.counts().runs === 3);
    await x.slack.waitFor((s) => s.ephemerals.length === 1);

    expect(x.slack.ephemerals).toEqual([
      expect.objectContaining({
        channel: CHANNEL,
        user: FLOODER,
        thread_ts: third.threadTs,
        text: OVER_LIMIT_NOTE,
      }),
    ]);
    expect(x.slack.replies(CHANNEL, third.threadTs)).toEqual([]);
    // The other person's reply shows once the channel's posting pace lets it.
    await x.slack.waitFor((s) => s.replies(CHANNEL, other.threadTs).length === 1);
    const posted = x.serviceRequests("POST", /\/messages$/).map((r) => r.body);
    expect(posted).toHaveLength(3);
    expect(posted).not.toContainEqual({ content: "three" });
    // A Slack retry of the refused message is not answered later either.
    const retry = appMention({
      channel: CHANNEL,
      user: FLOODER,
      text: "<@UBOT> three",
      ts: third.ts,
    });
    expect((await x.post("event", retry, { retryNum: 1 })).status).toBe(200);
    expect(x.logs.some((l) => l.includes('"result":"duplicate"'))).toBe(true);
    expect(x.slack.ephemerals).toHaveLength(1);
    expect(x.sim.control.counts().messages).toBe(3);
  });
});

/** `<@U…>` mentions of `count` people nobody has looked up, as Slack writes them. */
const mentionsOf = (count: number) =>
  Array.from({ length: count }, (_, i) => `<@U0M${String(i).padStart(4, "0")}>`).join(" ");

describe("one person's message full of mentions", () => {
  it("costs a bounded number of users.info calls; another person is still checked and answered", async () => {
    // Every writer is looked up (guests are refused): that check must still get its call.
    h = await startHarness({ env: { ALLOW_GUESTS: "false" } });
    const x = h;
    x.sim.control.setDefaultAnswer({ text: "An answer.", tokensPerSecond: Infinity });
    x.slack.seedUser({ id: FLOODER, name: "flo" });
    x.slack.seedUser({ id: OTHER, name: "otto" });
    const flood = await x.mention(`<@UBOT> who are ${mentionsOf(200)}?`, { user: FLOODER });
    const other = await x.mention("<@UBOT> my turn?", { user: OTHER });
    expect(await x.settled(CHANNEL, other.threadTs)).toEqual([
      expect.stringContaining("An answer."),
    ]);
    await x.settled(CHANNEL, flood.threadTs);
    expect(x.slack.ephemerals).toEqual([]);
    const looked = x.slack.callsTo("users.info").map((c) => String(c.args.user));
    // The two writers, and at most a message's worth of the people mentioned.
    expect(looked).toEqual(expect.arrayContaining([FLOODER, OTHER]));
    expect(looked.length).toBeLessThanOrEqual(2 + 20);
    expect(x.slack.rateLimitedFor("users.info")).toBe(0);
    // The names not looked up reach the assistant as ids.
    const [question] = x.serviceRequests("POST", /\/messages$/).map((r) => r.body);
    expect(question).toEqual({ content: expect.stringContaining("@U0M0199?") });
  });

  it("past MAX_QUEUED_TURNS_PER_PERSON costs no users.info call at all", async () => {
    h = await startHarness({ env: { MAX_QUEUED_TURNS_PER_PERSON: "1" } });
    const x = h;
    x.sim.control.setDefaultAnswer({ text: "Thinking for ever", hang: true });
    await x.mention("<@UBOT> one", { user: FLOODER });
    await x.slack.waitFor(() => x.sim.control.counts().runs === 1);
    const before = x.slack.callsTo("users.info").length;
    const over = await x.mention(`<@UBOT> and ${mentionsOf(30)}`, { user: FLOODER });
    await x.slack.waitFor((s) => s.ephemerals.length === 1);
    expect(x.slack.ephemerals[0]).toMatchObject({
      user: FLOODER,
      thread_ts: over.threadTs,
      text: OVER_LIMIT_NOTE,
    });
    expect(x.slack.callsTo("users.info")).toHaveLength(before);
  });
});

describe("the service budget shared between people", () => {
  it("starts another person's run before the flooder's queue of ten drains", async () => {
    // Two run starts per 400 ms on both sides: the budget, not the service, makes them wait.
    const limits = { runStartsPerMinute: 2, windowMs: 400 };
    sim = await startSimulator({
      queueDelayMs: 0,
      answer: { tokensPerSecond: Number.POSITIVE_INFINITY },
      limits,
    });
    client = new ServiceClient({
      baseUrl: sim.url,
      token: "fair-token",
      budget: new ServiceBudget(limits),
    });
    const { conversations, turns, settings, leases } = memoryStores();
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    const content = new TurnContent({
      history: undefined,
      turns,
      conversations,
      logger: silent,
      budgetChars: 0,
    });
    const runner = new TurnRunner({
      service: client,
      relay: new Relay(client, { pollIntervalMs: 50 }),
      turns,
      conversations,
      settings,
      content,
      logger: silent,
      limits: { maxMessageChars: 1_000, runTimeoutMs: 60_000, serviceOutageMs: 60_000 },
      clock: systemClock,
    });
    const bridge = new Bridge({
      conversations,
      turns,
      leases,
      replica: { holder: "replica-1", leaseTtlMs: 15_000, sweepMs: 2_000 },
      runner,
      replies: new FakeReplies(),
      logger: silent,
      assistantFor: () => "asst-fair",
      maxQueuedPerPerson: 20,
    });
    const inbound = (user: string, n: number): Inbound => ({
      team: "T1",
      channel: "C1",
      isDirect: false,
      threadTs: `100.${String(n).padStart(6, "0")}`,
      ts: `100.${String(n).padStart(6, "0")}`,
      user,
      text: `${user} question ${n}`,
      files: [],
      mentioned: true,
    });
    for (let n = 1; n <= 10; n++) expect(await bridge.accept(inbound(FLOODER, n))).toBe("accepted");
    expect(await bridge.accept(inbound(OTHER, 11))).toBe("accepted");
    await bridge.idle();

    const contentOf = new Map(
      sim.control
        .threads()
        .flatMap((t) => sim?.control.messages(t.id) ?? [])
        .map((m) => [m.id, m.content]),
    );
    const order = sim.control
      .runs()
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((run) => String(contentOf.get(run.triggerMessageId)).split(" ")[0]);
    expect(order).toHaveLength(11);
    const otherAt = order.indexOf(OTHER);
    expect(otherAt).toBeGreaterThanOrEqual(0);
    // Round-robin between people: right after the runs that started at once, not eleventh.
    expect(otherAt).toBeLessThanOrEqual(3);
    expect(order.slice(otherAt + 1).filter((who) => who === FLOODER).length).toBeGreaterThan(5);
    expect(await turns.unfinished()).toEqual([]);
  });
});
