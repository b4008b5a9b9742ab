import { describe, expect, it, vi } from "vitest";
import { QuestionPost } from "../../../src/bridge/turn/question-post.js";
import { TurnContent } from "../../../src/bridge/turn/turn-content.js";
import { FakeServiceError } from "../../support/fake-service.js";
import { stepSetup } from "../../support/step-setup.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function setup() {
  const s = await stepSetup();
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
    const s = await setup();
    const t = await s.composed(await s.turn());
    const held = s.service.hold("postMessage");
    const posting = s.post.step(t, await s.context(t));
    await held.entered;
    expect((await s.stores.turns.byId(t.id))?.state).toBe("posting");
    held.release();
    const posted = await posting;
    expect(posted).toMatchObject({ state: "message_posted", serviceMessageId: "msg-1" });
    expect(s.service.calls).toEqual([
      { call: "postMessage", threadId: "thread-9", content: "What is up?" },
    ]);
  });

  it("holds the question's post until the thread just opened is on the conversation's record", async () => {
    const s = await setup();
    const t = await s.composed(await s.turn());
    const context = await s.context(t);
    let land: (kept: string) => void = () => undefined;
    context.threadRecorded = new Promise((resolve) => (land = resolve));
    const posting = s.post.step(t, context);
    await new Promise(setImmediate);
    // Under way, and not a byte sent.
    expect(s.service.calls).toEqual([]);
    land("thread-9");
    expect(await posting).toMatchObject({ state: "message_posted", serviceMessageId: "msg-1" });
    expect(s.service.calls).toEqual([
      { call: "postMessage", threadId: "thread-9", content: "What is up?" },
    ]);
  });

  it("sends no question to a thread the conversation's record does not keep", async () => {
    const s = await setup();
    const t = await s.composed(await s.turn());
    const context = await s.context(t);
    // Another replica's thread was recorded first.
    context.threadRecorded = Promise.resolve("thread-other");
    await expect(s.post.step(t, context)).rejects.toThrow(/thread-other/);
    expect(s.service.calls).toEqual([]);
    expect((await s.stores.turns.byId(t.id))?.serviceMessageId).toBeNull();
  });

  it("goes on once the question is posted, its message left for the run's attempt to record", async () => {
    const s = await setup();
    const t = await s.composed(await s.turn());
    const records = vi.spyOn(s.stores.turns, "recordMessage");
    const context = await s.context(t);
    const posted = await s.post.step(t, context);
    // The step has ended with the message, and written nothing of it.
    expect(posted).toMatchObject({ state: "message_posted", serviceMessageId: "msg-1" });
    expect(context.unrecordedMessage).toBe("msg-1");
    await Promise.all(context.landing);
    expect(records).not.toHaveBeenCalled();
    expect((await s.stores.turns.byId(t.id))?.state).toBe("posting");
    // The run's attempt records it in its own write.
    const started = await s.stores.turns.recordRunAttempt(t.id, {}, { message: "msg-1" });
    expect(started).toMatchObject({ state: "run_starting", serviceMessageId: "msg-1" });
  });

  it("fixes the question's text and records the post's attempt in one write", async () => {
    const s = await setup();
    const t = await s.turn();
    const writes = vi.spyOn(s.stores.turns, "recordContent");
    const attempts = vi.spyOn(s.stores.turns, "recordPostAttempt");
    const attempted = await s.post.attempt(t, await s.context(t));
    expect(attempted).toMatchObject({ state: "posting", serviceContent: "What is up?" });
    expect(writes).toHaveBeenCalledTimes(1);
    expect(attempts).not.toHaveBeenCalled();
    expect(await s.stores.turns.byId(t.id)).toMatchObject({ state: "posting" });
  });

  it("records only the attempt of a turn composed before, keeping its text", async () => {
    const s = await setup();
    const t = await s.composed(await s.turn());
    const writes = vi.spyOn(s.stores.turns, "recordContent");
    const attempted = await s.post.attempt(t, await s.context(t));
    expect(attempted).toMatchObject({ state: "posting", serviceContent: "What is up?" });
    expect(writes).not.toHaveBeenCalled();
  });

  it("does nothing for a turn whose question is posted", async () => {
    const s = await setup();
    const t = await s.composed(await s.turn());
    await s.stores.turns.recordPostAttempt(t.id);
    const done = await s.stores.turns.recordMessage(t.id, "msg-0");
    expect(await s.post.step(done, await s.context(done))).toBe(done);
    expect(s.service.calls).toEqual([]);
  });

  it("after a failed attempt, finds the message the service kept instead of posting again", async () => {
    const s = await setup();
    const t = await s.composed(await s.turn());
    await s.stores.turns.recordPostAttempt(t.id);
    s.service.messages.push({ id: "msg-kept", content: "What is up?", role: "user" });
    const posted = await s.post.step((await s.stores.turns.byId(t.id)) ?? t, await s.context(t));
    expect(posted.serviceMessageId).toBe("msg-kept");
    expect(s.service.count("postMessage")).toBe(0);
  });

  it("does not take an earlier turn's same question for this one", async () => {
    const s = await setup();
    const first = await s.composed(await s.turn("same?"));
    const firstContext = await s.context(first);
    await s.post.step(first, firstContext);
    await Promise.all(firstContext.landing);
    // As the runner does once the first turn's steps are over.
    await s.stores.turns.recordMessage(first.id, firstContext.unrecordedMessage ?? "");
    const again = await s.composed(await s.turn("same?"));
    s.service.failNext("postMessage", new FakeServiceError("connection"));
    await expect(s.post.step(again, await s.context(again))).rejects.toThrow("fake connection");
    const resumed = (await s.stores.turns.byId(again.id)) ?? again;
    expect(resumed.state).toBe("posting");
    const posted = await s.post.step(resumed, await s.context(resumed));
    expect(posted.serviceMessageId).not.toBe(first.serviceMessageId);
    expect(s.service.messages.map((m) => m.content)).toEqual(["same?", "same?"]);
  });
});
