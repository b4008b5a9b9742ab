import { describe, expect, it } from "vitest";
import type {
  BridgeLogger,
  SharedFilesReader,
  ThreadHistory,
  ThreadHistoryRequest,
  ThreadMessage,
} from "../../../src/bridge/ports.js";
import { HISTORY_NOTE, TurnContent } from "../../../src/bridge/turn/turn-content.js";
import type { SharedFile } from "../../../src/files/kinds.js";
import { memoryStores } from "../../../src/store/in-memory.js";
import type { Conversation } from "../../../src/store/stores.js";
import type { Turn } from "../../../src/store/turn.js";
import { systemClock } from "../../../src/time.js";
import { FakeReplies, turnLife } from "../../support/fake-replies.js";

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

/** Reads a file by its id as "text of <id>", except those named unreadable. */
class FakeFiles implements SharedFilesReader {
  readonly asked: { team: string; ids: string[] }[] = [];
  async read(team: string, files: readonly SharedFile[]) {
    this.asked.push({ team, ids: files.map((f) => f.id) });
    const readable = files.filter((f) => !f.name?.endsWith(".png"));
    return {
      texts: readable.map((f) => ({ name: f.name ?? f.id, type: "text", text: `text of ${f.id}` })),
      unread: files
        .filter((f) => f.name?.endsWith(".png"))
        .map((f) => ({ name: f.name ?? f.id, why: "the assistant service does not take images" })),
    };
  }
}

async function setup(messages: ThreadMessage[], budgetChars = 12_000) {
  const { conversations, turns } = memoryStores();
  const history = new FakeHistory(messages);
  const files = new FakeFiles();
  const conversation = await conversations.ensure(
    { team: "T", channel: "C", threadTs: THREAD },
    "a",
  );
  const content = new TurnContent({
    history,
    files,
    turns,
    conversations,
    logger: quiet,
    budgetChars,
  });
  const turn = async (messageTs: string, text: string, shared: SharedFile[] = []): Promise<Turn> =>
    (
      await turns.record({
        conversation: conversation,
        assistant: conversation.assistantId,
        team: "T",
        channel: "C",
        threadTs: THREAD,
        messageTs,
        user: "U1",
        content: text,
        files: shared,
        notes: [],
      })
    ).turn as Turn;
  const fresh = async () => (await conversations.byId(conversation.id)) as Conversation;
  /** Composes `t`'s text and fixes it; the text, and the turn as recorded. */
  const compose = async (t: Turn) => {
    const outage = { giveUpAfterMs: 0, clock: systemClock, onRetry: () => {} };
    const life = turnLife(new FakeReplies(), turns, t);
    const context = { life, conversation: await fresh(), outage, party: t.user, landing: [] };
    const fixed = await content.fix(t, context);
    const composed = fixed ? await turns.recordContent(t.id, fixed) : t;
    return { text: composed.serviceContent ?? "", turn: composed };
  };
  return { conversations, turns, history, files, content, turn, fresh, compose };
}

describe("TurnContent", () => {
  it("composes the thread's unseen messages before the question, and the text is stored as fixed", async () => {
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
    // A restart reads back exactly the same text (QuestionPost.attempt does not compose again).
    const again = (await s.turns.byId(t.id)) as Turn;
    expect(again.serviceContent).toBe(first);
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

  it("reads the question's files first, then those of the messages it passes on, never a withheld one's", async () => {
    const shared = (id: string, name = `${id}.txt`) => ({ id, name });
    const s = await setup([
      { ...said(THREAD, "Bob", "draft"), files: [shared("F1")] },
      { ...said("1700000001.000000", "", ""), withheld: "refused", files: [shared("F2")] },
      { ...said("1700000002.000000", "Assistant", "", true), files: [shared("F3")] },
    ]);
    const t = await s.turn("1700000003.000000", "compare", [shared("F4"), shared("F5", "a.png")]);
    const { text, turn: composed } = await s.compose(t);
    expect(s.files.asked).toEqual([{ team: "T", ids: ["F4", "F5", "F1"] }]);
    expect(text).toContain(
      "--- File: F4.txt (text) ---\ntext of F4\n--- End of F4.txt ---\n\n--- File: F1.txt (text) ---",
    );
    expect(composed.notes).toEqual([
      "1 earlier message in this thread was left out of what the assistant saw: it is from someone I don't answer.",
      "Not passed on to the assistant: a.png (the assistant service does not take images).",
    ]);
  });

  it("reads the question's files when it starts its thread, or when the thread cannot be read", async () => {
    const s = await setup([said(THREAD, "Bob", "x")]);
    const t = await s.turn(THREAD, "what is this?", [{ id: "F1", name: "a.txt" }]);
    expect((await s.compose(t)).text).toBe(
      [
        "Files shared with the question and in this thread, the question's own first:",
        "",
        "--- File: a.txt (text) ---\ntext of F1\n--- End of a.txt ---",
        "",
        "---",
        "",
        "Question:",
        "what is this?",
      ].join("\n"),
    );
    s.history.failWith = new Error("missing_scope");
    const u = await s.turn("1700000001.000000", "and this?", [{ id: "F2", name: "b.txt" }]);
    const { text, turn: composed } = await s.compose(u);
    expect(text).toContain("--- File: b.txt (text) ---\ntext of F2\n");
    expect(composed.notes).toEqual([HISTORY_NOTE]);
    expect(s.history.requests).toHaveLength(1);
  });
});
