import { describe, expect, it } from "vitest";
import type { ReplyView } from "../../../src/bridge/ports.js";
import { StatusLine } from "../../../src/slack/agent/status-line.js";
import { statusWords } from "../../../src/slack/agent/status-words.js";
import type { ThreadStatusArgs } from "../../../src/slack/web-api/web-api.js";

/** The status line over a recorder of what it asks Slack to show. */
function setup(onItsWay = false) {
  const said: { key: string; args: ThreadStatusArgs }[] = [];
  const cleared: string[] = [];
  const line = new StatusLine({
    set: async (_team, key, args) => {
      said.push({ key, args });
      return true;
    },
    cleared: (_team, key) => {
      cleared.push(key);
      return onItsWay;
    },
  });
  const thread = { team: "T1", channel: "C1", threadTs: "1.1" };
  const statuses = () => said.map((s) => s.args.status);
  return { line, said, cleared, thread, statuses };
}

const view = (phase: ReplyView["phase"], body = "", steps?: ReplyView["steps"]): ReplyView => ({
  body,
  phase,
  notes: [],
  ...(steps && { steps }),
});

describe("the status line's words", () => {
  it("says where a turn waits, and how many are ahead", () => {
    expect(statusWords(view({ kind: "queued", ahead: 2, where: "service" }))).toEqual({
      status: "is waiting for its turn…",
      loading_messages: ["Queued — 2 ahead at the assistant service"],
    });
    expect(statusWords(view({ kind: "queued", ahead: 0, where: "thread" }))).toEqual({
      status: "is waiting for its turn…",
      loading_messages: ["Queued — next in line in this thread"],
    });
  });

  it("reads the thread, thinks, then writes, naming the steps under way", () => {
    expect(statusWords(view({ kind: "starting" })).status).toBe("is reading the thread…");
    expect(statusWords(view({ kind: "working" }))).toEqual({
      status: "is thinking…",
      loading_messages: ["Thinking…"],
    });
    const steps = [
      { id: "1", title: "Searched the wiki", status: "complete" as const },
      { id: "2", title: "Reading   the\nrelease notes", status: "in_progress" as const },
    ];
    expect(statusWords(view({ kind: "working" }, "Partial", steps))).toEqual({
      status: "is writing…",
      loading_messages: ["Writing the answer…", "Reading the release notes"],
    });
  });

  it("clears the line once the reply says how it ended", () => {
    for (const phase of [
      { kind: "completed" },
      { kind: "failed", error: "x" },
      { kind: "stopped", by: "U1" },
      { kind: "unreachable", message: "down" },
    ] as const) {
      expect(statusWords(view(phase))).toEqual({ status: "" });
    }
  });

  it("keeps to Slack's ten loading messages, however many questions wait", () => {
    const steps = Array.from({ length: 20 }, (_, i) => ({
      id: String(i),
      title: `step ${i}`,
      status: "in_progress" as const,
    }));
    const words = statusWords(view({ kind: "working" }, "", steps), 3);
    expect(words.loading_messages).toHaveLength(10);
    expect(words.loading_messages?.at(-1)).toBe("3 more questions wait in this thread");
  });
});

describe("the status line of a thread", () => {
  it("follows the earliest live turn, counts the ones waiting, and clears after the last", () => {
    const { line, said, thread, statuses } = setup();
    line.show(thread, "t1", view({ kind: "starting" }));
    line.show(thread, "t2", view({ kind: "queued", ahead: 1, where: "thread" }));
    line.show(thread, "t1", view({ kind: "working" }, "Hel"));
    line.end(thread, "t1");
    line.show(thread, "t2", view({ kind: "working" }));
    line.end(thread, "t2");
    expect(statuses()).toEqual([
      "is reading the thread…",
      "is reading the thread…",
      // t1's words are on their way to its reply: the line does not say "writing".
      "is waiting for its turn…",
      "is thinking…",
      "",
    ]);
    expect(said[1]?.args.loading_messages?.at(-1)).toBe("1 more question waits in this thread");
    expect(said[4]?.args).toEqual({ channel_id: "C1", thread_ts: "1.1", status: "" });
  });

  it("asks nothing when the words do not change, and clears nothing never said", () => {
    const { line, thread, statuses } = setup();
    line.show(thread, "t1", view({ kind: "working" }));
    line.show(thread, "t1", view({ kind: "working" }));
    line.show(thread, "t1", view({ kind: "working" }, "words"));
    line.end(thread, "t1");
    line.end(thread, "t1");
    line.show(thread, "t2", view({ kind: "completed" }));
    line.end(thread, "t2");
    expect(statuses()).toEqual(["is thinking…", ""]);
  });

  it("says nothing more once the leading turn's reply has posted, which cleared the line", () => {
    const { line, thread, cleared, statuses } = setup();
    line.posted(thread, "t1");
    line.show(thread, "t1", view({ kind: "starting" }));
    line.show(thread, "t2", view({ kind: "queued", ahead: 0, where: "thread" }));
    line.posted(thread, "t1");
    // The reply of t1 says what it does: its phases change nothing here.
    line.show(thread, "t1", view({ kind: "working" }, "words"));
    line.show(thread, "t1", view({ kind: "working" }, "more words"));
    expect(cleared).toEqual(["C1\u00001.1"]);
    // t2 leads once t1 ends, and its reply has not posted: the line speaks for it again.
    line.end(thread, "t1");
    line.show(thread, "t2", view({ kind: "starting" }));
    line.posted(thread, "t2");
    // Slack cleared the line when t2's reply posted: nothing is left to clear at the end.
    line.end(thread, "t2");
    line.posted(thread, "t2");
    expect(statuses()).toEqual([
      "is reading the thread…",
      // The same words, now saying one more question waits.
      "is reading the thread…",
      "is waiting for its turn…",
      "is reading the thread…",
    ]);
    expect(cleared).toEqual(["C1\u00001.1", "C1\u00001.1"]);
  });

  it("clears again words that were on their way when the reply posted", () => {
    const { line, thread, said } = setup(true);
    line.show(thread, "t1", view({ kind: "starting" }));
    line.posted(thread, "t1");
    line.show(thread, "t1", view({ kind: "working" }, "words"));
    expect(said.map((s) => s.args)).toEqual([
      { channel_id: "C1", thread_ts: "1.1", ...statusWords(view({ kind: "starting" })) },
      { channel_id: "C1", thread_ts: "1.1", status: "" },
    ]);
  });
});
