import { describe, expect, it } from "vitest";
import { AgentSessions, sessionTitle } from "../../../src/slack/agent/agent-session.js";
import type { SessionStatusArgs } from "../../../src/slack/web-api/web-api.js";

/** Sessions over recorders of the calls they ask for; `landed` says whether statuses land. */
function setup(landed = true) {
  const calls: string[] = [];
  const sessions = new AgentSessions(
    {
      set: async (_team, _key, args: SessionStatusArgs) => {
        calls.push(
          [
            `status ${args.status}`,
            args.title && `title "${args.title}"`,
            args.initiator_user_id && `by ${args.initiator_user_id}`,
          ]
            .filter(Boolean)
            .join(" "),
        );
        return landed;
      },
    },
    {
      set: async (_team, _key, args) => {
        calls.push(`rename "${args.title}"`);
        return true;
      },
    },
  );
  const thread = { team: "T1", channel: "D1", threadTs: "1.1" };
  return { sessions, calls, thread };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("a thread's agent session", () => {
  it("is processing while any turn of the thread is live, active after the last", async () => {
    const { sessions, calls, thread } = setup();
    sessions.begin(thread, "t1", { user: "U1", text: " What  is\nnew? ", startsThread: true });
    sessions.begin(thread, "t2", { user: "U2", text: "And then?", startsThread: false });
    sessions.end(thread, "t1");
    await settle();
    expect(calls).toEqual([
      'status processing title "What is new?" by U1',
      'rename "What is new?"',
    ]);
    sessions.end(thread, "t2");
    sessions.end(thread, "t2");
    expect(calls.at(-1)).toBe("status active");
    expect(calls).toHaveLength(3);
  });

  it("renames only for a question that opens its thread, and only once the session exists", async () => {
    const later = setup();
    later.sessions.begin(later.thread, "t1", { user: "U1", text: "Hi", startsThread: false });
    const refused = setup(false);
    refused.sessions.begin(refused.thread, "t1", { user: "U1", text: "Hi", startsThread: true });
    await settle();
    expect(later.calls).toEqual(['status processing title "Hi" by U1']);
    expect(refused.calls).toEqual(['status processing title "Hi" by U1']);
  });

  it("rests when Slack's stop is pressed where nothing of the thread runs here", () => {
    const { sessions, calls, thread } = setup();
    sessions.begin(thread, "t1", undefined);
    sessions.settle(thread);
    expect(calls).toEqual(["status processing"]);
    sessions.end(thread, "t1");
    sessions.settle(thread);
    expect(calls).toEqual(["status processing", "status active", "status active"]);
  });
});

describe("a session's title", () => {
  it("is the question on one line, trimmed, at most 200 characters cut at a word", () => {
    expect(sessionTitle("  Why   is\n\nthe sky blue? ")).toBe("Why is the sky blue?");
    expect(sessionTitle(" \n ")).toBeUndefined();
    const long = `${"word ".repeat(60)}end`;
    const title = sessionTitle(long) ?? "";
    expect(title.length).toBeLessThanOrEqual(200);
    expect(title).toMatch(/^word( word)+…$/);
    const unbroken = "x".repeat(300);
    expect(sessionTitle(unbroken)).toBe(`${"x".repeat(199)}…`);
  });
});
