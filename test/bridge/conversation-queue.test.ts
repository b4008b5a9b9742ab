import { describe, expect, it } from "vitest";
import { ConversationQueue } from "../../src/bridge/conversation-queue.js";

/** A task that records its start and end, and ends when the test says so. */
function task(log: string[], name: string) {
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const run = async () => {
    log.push(`start ${name}`);
    await done;
    log.push(`end ${name}`);
  };
  return { run, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("ConversationQueue", () => {
  it("runs one task at a time per key, in the order added, and keys side by side", async () => {
    const queue = new ConversationQueue();
    const log: string[] = [];
    const a1 = task(log, "a1");
    const a2 = task(log, "a2");
    const b1 = task(log, "b1");
    void queue.add("a", a1.run);
    void queue.add("a", a2.run);
    void queue.add("b", b1.run);
    await tick();
    expect(log).toEqual(["start a1", "start b1"]);
    expect([queue.pending("a"), queue.pending("b"), queue.size]).toEqual([2, 1, 2]);
    a1.finish();
    await tick();
    expect(log).toEqual(["start a1", "start b1", "end a1", "start a2"]);
    expect(queue.pending("a")).toBe(1);
    a2.finish();
    b1.finish();
    await queue.idle();
    expect([queue.pending("a"), queue.size]).toEqual([0, 0]);
  });

  it("goes on with the next task when one fails", async () => {
    const queue = new ConversationQueue();
    const log: string[] = [];
    void queue.add("a", async () => {
      throw new Error("boom");
    });
    await queue.add("a", async () => {
      log.push("second");
    });
    expect(log).toEqual(["second"]);
  });

  it("is idle at once with nothing added, and only after tasks added later", async () => {
    const queue = new ConversationQueue();
    await queue.idle();
    const log: string[] = [];
    const late = task(log, "late");
    void queue.add("a", async () => {
      void queue.add("b", late.run);
    });
    let idle = false;
    void queue.idle().then(() => {
      idle = true;
    });
    await tick();
    expect(idle).toBe(false);
    late.finish();
    await tick();
    await tick();
    expect(idle).toBe(true);
  });
});
