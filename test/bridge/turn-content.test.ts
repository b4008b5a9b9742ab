import { describe, expect, it } from "vitest";
import type { ThreadHistory, ThreadHistoryRequest, ThreadMessage } from "../../src/bridge/ports.js";
import { HISTORY_NOTE, TurnContent } from "../../src/bridge/turn-content.js";
import type { BridgeLogger } from "../../src/bridge/turn-runner.js";
import { type Conversation, ConversationStore } from "../../src/store/conversations.js";
import { openDatabase } from "../../src/store/db.js";
import { type Turn, TurnStore } from "../../src/store/turns.js";

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

function setup(messages: ThreadMessage[], budgetChars = 12_000) {
  const db = openDatabase(":memory:");
  const conversations = new ConversationStore(db);
  const turns = new TurnStore(db);
  const history = new FakeHistory(messages);
  const conversation = conversations.ensure({ team: "T", channel: "C", threadTs: THREAD }, "a");
  const content = new TurnContent({ history, turns, conversations, logger: quiet, budgetChars });
  const turn = (messageTs: string, text: string): Turn =>
    turns.create({
      conversationId: conversation.id,
      team: "T",
      channel: "C",
      threadTs: THREAD,
      messageTs,
      user: "U1",
      content: text,
      notes: [],
    }) as Turn;
  const fresh = () => conversations.byId(conversation.id) as Conversation;
  return { db, conversations, turns, history, content, turn, fresh };
}

describe("TurnContent", () => {
  it("composes once, stores the text, and gives the same text on a retry without reading again", async () => {
    const s = setup([
      said(THREAD, "Bob", "the plan is X"),
      said("1700000001.000000", "Carol", "ok"),
    ]);
    const t = s.turn("1700000002.000000", "summarize");
    const first = await s.content.of(t, s.fresh());
    expect(first).toContain("Bob: the plan is X\nCarol: ok");
    expect(first.endsWith("Question from Alice:\nsummarize")).toBe(true);
    expect(s.history.requests).toEqual([
      { team: "T", channel: "C", threadTs: THREAD, after: null, asker: "U1" },
    ]);
    // A restart: the turn read back from the store posts exactly the same text.
    s.history.messages = [];
    const again = s.turns.byId(t.id) as Turn;
    expect(again.serviceContent).toBe(first);
    expect(await s.content.of(again, s.fresh())).toBe(first);
    expect(s.history.requests).toHaveLength(1);
  });

  it("moves the conversation's passed-through point only once the question is posted", async () => {
    const s = setup([said(THREAD, "Bob", "hello")]);
    const t = s.turn("1700000002.000000", "q");
    await s.content.of(t, s.fresh());
    expect(s.fresh().passedThroughTs).toBeNull();
    s.content.posted(t);
    expect(s.fresh().passedThroughTs).toBe("1700000002.000000");
    // Never backwards.
    s.content.posted({ ...t, contextThroughTs: "1700000001.000000" });
    expect(s.fresh().passedThroughTs).toBe("1700000002.000000");
  });

  it("passes the question alone with a note when the history cannot be read, and catches up later", async () => {
    const s = setup([
      said(THREAD, "Bob", "first"),
      said("1700000002.000000", "Alice", "q1"),
      said("1700000003.000000", "Assistant", "", true),
      said("1700000004.000000", "Carol", "in between"),
    ]);
    s.history.failWith = new Error("missing_scope");
    const t1 = s.turn("1700000002.000000", "q1");
    expect(await s.content.of(t1, s.fresh())).toBe("q1");
    expect(t1.notes).toEqual([HISTORY_NOTE]);
    expect(s.turns.byId(t1.id)?.notes).toEqual([HISTORY_NOTE]);
    s.turns.update(t1.id, { serviceMessageId: "m1", state: "finished", outcome: "completed" });
    s.content.posted(t1);
    expect(s.fresh().passedThroughTs).toBeNull();

    // The next turn passes on what the first could not, but not the first question again.
    s.history.failWith = undefined;
    const t2 = s.turn("1700000005.000000", "q2");
    const text = await s.content.of(t2, s.fresh());
    expect(text).toContain("Bob: first\nCarol: in between\n");
    expect(text).not.toContain("Alice: q1");
    expect(t2.notes).toEqual([]);
  });

  it("passes on a message whose turn ended before it reached the service", async () => {
    const s = setup([
      said(THREAD, "Bob", "too long question"),
      said("1700000001.000000", "Bob", "x"),
    ]);
    const refused = s.turn(THREAD, "too long question");
    s.turns.update(refused.id, { state: "finished", outcome: "error" });
    const t = s.turn("1700000002.000000", "again");
    expect(await s.content.of(t, s.fresh())).toContain("Bob: too long question\nBob: x\n");
  });

  it("does not read Slack for a question that starts its thread, or with a budget of 0", async () => {
    const s = setup([said(THREAD, "Bob", "x")]);
    const t = s.turn(THREAD, "hello");
    expect(await s.content.of(t, s.fresh())).toBe("hello");
    expect(t.contextThroughTs).toBe(THREAD);
    const off = setup([said(THREAD, "Bob", "x")], 0);
    const u = off.turn("1700000001.000000", "hi");
    expect(await off.content.of(u, off.fresh())).toBe("hi");
    expect(s.history.requests).toEqual([]);
    expect(off.history.requests).toEqual([]);
  });

  it("adds a note when the budget left messages out", async () => {
    const many = Array.from({ length: 50 }, (_, i) =>
      said(`${1700000000 + i}.000000`, "Bob", `message ${i} ${"x".repeat(50)}`),
    );
    const s = setup(many, 1_000);
    const t = s.turn("1700000100.000000", "sum up");
    const text = await s.content.of(t, s.fresh());
    const leftOut = Number(/\[… (\d+) messages left out …\]/.exec(text)?.[1]);
    expect(leftOut).toBeGreaterThan(30);
    expect(t.notes).toEqual([
      `This thread is long: ${leftOut} of its earlier messages were left out of what the assistant saw.`,
    ]);
  });
});
