import { describe, expect, it } from "vitest";
import { QuestionPost } from "../../src/bridge/question-post.js";
import { TurnContent } from "../../src/bridge/turn-content.js";
import { FakeServiceError } from "../support/fake-service.js";
import { stepSetup } from "../support/step-setup.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function setup() {
  const s = stepSetup();
  const { turns, conversations } = s.stores;
  const content = new TurnContent({
    history: undefined,
    turns,
    conversations,
    logger: quiet,
    budgetChars: 0,
  });
  const post = new QuestionPost({ service: s.service, turns, content });
  return { ...s, post };
}

describe("QuestionPost", () => {
  it("records the attempt before the post is sent, then the message", async () => {
    const s = setup();
    const t = s.composed(s.turn());
    const held = s.service.hold("postMessage");
    const posting = s.post.step(t, s.context(t));
    await held.entered;
    expect(s.stores.turns.byId(t.id)?.state).toBe("posting");
    held.release();
    const posted = await posting;
    expect(posted).toMatchObject({ state: "message_posted", serviceMessageId: "msg-1" });
    expect(s.service.calls).toEqual([
      { call: "postMessage", threadId: "thread-9", content: "What is up?" },
    ]);
  });

  it("does nothing for a turn whose question is posted", async () => {
    const s = setup();
    const t = s.composed(s.turn());
    s.stores.turns.recordPostAttempt(t.id);
    const done = s.stores.turns.recordMessage(t.id, "msg-0");
    expect(await s.post.step(done, s.context(done))).toBe(done);
    expect(s.service.calls).toEqual([]);
  });

  it("after a failed attempt, finds the message the service kept instead of posting again", async () => {
    const s = setup();
    const t = s.composed(s.turn());
    s.stores.turns.recordPostAttempt(t.id);
    s.service.messages.push({ id: "msg-kept", content: "What is up?", role: "user" });
    const posted = await s.post.step(s.stores.turns.byId(t.id) ?? t, s.context(t));
    expect(posted.serviceMessageId).toBe("msg-kept");
    expect(s.service.count("postMessage")).toBe(0);
  });

  it("does not take an earlier turn's same question for this one", async () => {
    const s = setup();
    const first = s.composed(s.turn("same?"));
    await s.post.step(first, s.context(first));
    const again = s.composed(s.turn("same?"));
    s.service.failNext("postMessage", new FakeServiceError("connection"));
    await expect(s.post.step(again, s.context(again))).rejects.toThrow("fake connection");
    const resumed = s.stores.turns.byId(again.id) ?? again;
    expect(resumed.state).toBe("posting");
    const posted = await s.post.step(resumed, s.context(resumed));
    expect(posted.serviceMessageId).not.toBe(first.serviceMessageId);
    expect(s.service.messages.map((m) => m.content)).toEqual(["same?", "same?"]);
  });
});
