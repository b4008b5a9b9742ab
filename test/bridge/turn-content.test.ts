import { describe, expect, it } from "vitest";
import type {
  BridgeLogger,
  ThreadHistory,
  ThreadHistoryRequest,
  ThreadMessage,
} from "../../src/bridge/ports.js";
import { HISTORY_NOTE, TurnContent } from "../../src/bridge/turn-content.js";
import { memoryStores } from "../../src/store/in-memory.js";
import type { Conversation } from "../../src/store/stores.js";
import type { Turn } from "../../src/store/turn.js";
import { systemClock } from "../../src/time.js";
import { FakeReplies, liveTurn } from "../support/fake-replies.js";

const quiet: BridgeLogger = { debug() {}, info() {}, warn() {}, error() {} };
const THREAD = "1700000000.000000";

class FakeHistory implements ThreadHistory {
  readonly requests: ThreadHistoryRequest[] = [];
  failWith: Error | undefined;
  constructor(public messages: ThreadMessage[]) {}
  async read(request: ThreadHistoryRequest) {
    this.requests.push(request);
    if (this.failWith) throw this.failWith;
    return { messages: this.messages, askerName: "Alice" };
  }
}

const said = (ts: string, author: string, text: string, bySelf = false): ThreadMessage => ({
  ts,
  author,
  text,
  files: [],
  bySelf,
});

async function setup(messages: ThreadMessage[], budgetChars = 12_000) {
  const { conversations, turns } = memoryStores();
  const history = new FakeHistory(messages);
  const conversation = await conversations.ensure(
    { team: "T", channel: "C", threadTs: THREAD },
    "a",
  );
  const content = new TurnContent({ history, turns, conversations, logger: quiet, budgetChars });
  const turn = async (messageTs: string, text: string): Promise<Turn> =>
    (await turns.create({
      conversationId: conversation.id,
      team: "T",
      channel: "C",
      threadTs: THREAD,
      messageTs,
      user: "U1",
      content: text,
      notes: [],
    })) as Turn;
  const fresh = async () => (await conversations.byId(conversation.id)) as Conversation;
  /** Runs the compose step on `t`; the text it fixed, and the turn as recorded. */
  const compose = async (t: Turn) => {
    const outage = { giveUpAfterMs: 0, clock: systemClock, onRetry: () => {} };
    const live = liveTurn(new FakeReplies(), turns, t);
    const context = { live, conversation: await fresh(), outage, party: t.user };
    const composed = await content.step(t, context);
    return { text: composed.serviceContent ?? "", turn: composed };
  };
  return { conversations, turns, history, content, turn, fresh, compose };
}

describe("TurnContent", () => {
  it("composes once, stores the text, and gives the same text on a retry without reading again", async () => {
    const s = await setup([
      said(THREAD, "Bob", "the plan is X"),
      said("1700000001.000000", "Carol", "ok"),
    ]);
    const t = await s.turn("1700000002.000000", "summarize");
    const { text: first } = await s.compose(t);
    expect(first).toContain("Bob: the plan is X\nCarol: ok");
    expect(first.endsWith("Question from Alice:\nsummarize")).toBe(true);
    expect(s.history.requests).toEqual([
      { team: "T", channel: "C", threadTs: THREAD, after: null, asker: "U1" },
    ]);
    // A restart: the turn read back from the store posts exactly the same text.
    s.history.messages = [];
    const again = (await s.turns.byId(t.id)) as Turn;
    expect(again.serviceContent).toBe(first);
    expect((await s.compose(again)).text).toBe(first);
    expect(s.history.requests).toHaveLength(1);
  });

  it("moves the conversation's passed-through point only once the question is posted", async () => {
    const s = await setup([said(THREAD, "Bob", "hello")]);
    const t = await s.turn("1700000002.000000", "q");
    const { turn: composed } = await s.compose(t);
    expect((await s.fresh()).passedThroughTs).toBeNull();
    await s.content.posted(composed, await s.fresh());
    expect((await s.fresh()).passedThroughTs).toBe("1700000002.000000");
    // Never backwards.
    await s.content.posted({ ...composed, contextThroughTs: "1700000001.000000" }, await s.fresh());
    expect((await s.fresh()).passedThroughTs).toBe("1700000002.000000");
  });

  it("passes the question alone with a note when the history cannot be read, and catches up later", async () => {
    const s = await setup([
      said(THREAD, "Bob", "first"),
      said("1700000002.000000", "Alice", "q1"),
      said("1700000003.000000", "Assistant", "", true),
      said("1700000004.000000", "Carol", "in between"),
    ]);
    s.history.failWith = new Error("missing_scope");
    const t1 = await s.turn("1700000002.000000", "q1");
    const first = await s.compose(t1);
    expect(first.text).toBe("q1");
    expect((await s.turns.byId(t1.id))?.notes).toEqual([HISTORY_NOTE]);
    await s.turns.recordPostAttempt(t1.id);
    await s.content.posted(await s.turns.recordMessage(t1.id, "m1"), await s.fresh());
    await s.turns.finish(t1.id, { outcome: "completed" });
    expect((await s.fresh()).passedThroughTs).toBeNull();

    // The next turn passes on what the first could not, but not the first question again.
    s.history.failWith = undefined;
    const t2 = await s.turn("1700000005.000000", "q2");
    const second = await s.compose(t2);
    expect(second.text).toContain("Bob: first\nCarol: in between\n");
    expect(second.text).not.toContain("Alice: q1");
    expect(second.turn.notes).toEqual([]);
  });

  it("passes on a message whose turn ended before it reached the service", async () => {
    const s = await setup([
      said(THREAD, "Bob", "too long question"),
      said("1700000001.000000", "Bob", "x"),
    ]);
    const refused = await s.turn(THREAD, "too long question");
    await s.turns.finish(refused.id, { outcome: "error" });
    const t = await s.turn("1700000002.000000", "again");
    expect((await s.compose(t)).text).toContain("Bob: too long question\nBob: x\n");
  });

  it("does not read Slack for a question that starts its thread, or with a budget of 0", async () => {
    const s = await setup([said(THREAD, "Bob", "x")]);
    const t = await s.turn(THREAD, "hello");
    const alone = await s.compose(t);
    expect(alone.text).toBe("hello");
    expect(alone.turn.contextThroughTs).toBe(THREAD);
    const off = await setup([said(THREAD, "Bob", "x")], 0);
    const u = await off.turn("1700000001.000000", "hi");
    expect((await off.compose(u)).text).toBe("hi");
    expect(s.history.requests).toEqual([]);
    expect(off.history.requests).toEqual([]);
  });

  it("adds a note when the budget left messages out", async () => {
    const many = Array.from({ length: 50 }, (_, i) =>
      said(`${1700000000 + i}.000000`, "Bob", `message ${i} ${"x".repeat(50)}`),
    );
    const s = await setup(many, 1_000);
    const t = await s.turn("1700000100.000000", "sum up");
    const { text, turn: composed } = await s.compose(t);
    const leftOut = Number(/\[… (\d+) messages left out …\]/.exec(text)?.[1]);
    expect(leftOut).toBeGreaterThan(30);
    expect(composed.notes).toEqual([
      `This thread is long: ${leftOut} of its earlier messages were left out of what the assistant saw.`,
    ]);
  });

  it("notes how many messages were withheld and why, without naming anyone", async () => {
    const withheld = (ts: string, why: "refused" | "unchecked"): ThreadMessage => ({
      ...said(ts, "", ""),
      withheld: why,
    });
    const s = await setup([
      said(THREAD, "Bob", "the plan"),
      withheld("1700000001.000000", "refused"),
      withheld("1700000002.000000", "refused"),
      withheld("1700000003.000000", "unchecked"),
    ]);
    const t = await s.turn("1700000004.000000", "thoughts?");
    const { text, turn: composed } = await s.compose(t);
    expect(text).toContain("Bob: the plan\n[… 2 messages from people the bot does not answer");
    expect(composed.notes).toEqual([
      "2 earlier messages in this thread were left out of what the assistant saw: they are from people I don't answer.",
      "1 earlier message in this thread was left out of what the assistant saw: I couldn't check who wrote it just now.",
    ]);
  });
});
