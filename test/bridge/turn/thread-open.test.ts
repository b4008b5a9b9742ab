import { describe, expect, it, vi } from "vitest";
import { threadOpen } from "../../../src/bridge/turn/thread-open.js";
import { stepSetup } from "../../support/step-setup.js";

/** A turn's first step in a conversation that has no service thread yet. */
async function setup() {
  const s = await stepSetup();
  const { conversations } = s.stores;
  const fresh = await conversations.ensure({ team: "T1", channel: "C1", threadTs: "2.2" }, "a");
  const t = await s.turn();
  const context = { ...(await s.context(t)), conversation: fresh };
  return { ...s, t, context, fresh, open: threadOpen(s.service, conversations) };
}

describe("threadOpen", () => {
  it("ends once the thread is open, its record landing while the steps go on", async () => {
    const s = await setup();
    const { conversations } = s.stores;
    let land: () => void = () => undefined;
    const landed = new Promise<void>((resolve) => (land = resolve));
    const record = conversations.setServiceThread.bind(conversations);
    vi.spyOn(conversations, "setServiceThread").mockImplementation(async (...args) => {
      await landed;
      return record(...args);
    });
    await s.open(s.t, s.context);
    expect(s.service.calls).toEqual([{ call: "openThread", assistantId: "a" }]);
    // Named at once for the steps after it; not on the record yet.
    expect(s.context.conversation.serviceThreadId).toBe("thread-1");
    expect((await conversations.byId(s.fresh.id))?.serviceThreadId).toBeNull();
    land();
    expect(await s.context.threadRecorded).toBe("thread-1");
    await Promise.all(s.context.landing);
    expect((await conversations.byId(s.fresh.id))?.serviceThreadId).toBe("thread-1");
  });

  it("goes by the thread the record keeps when another was recorded first", async () => {
    const s = await setup();
    const { conversations } = s.stores;
    const record = conversations.setServiceThread.bind(conversations);
    vi.spyOn(conversations, "setServiceThread").mockImplementation(async (id, _thread, owner) => {
      // Another replica's thread lands first; this one's write keeps it.
      await record(id, "thread-theirs", "shared");
      return record(id, "thread-1", owner);
    });
    await s.open(s.t, s.context);
    expect(await s.context.threadRecorded).toBe("thread-theirs");
    expect(s.context.conversation.serviceThreadId).toBe("thread-theirs");
  });

  it("opens nothing for a conversation that has its thread", async () => {
    const s = await stepSetup();
    const t = await s.turn();
    const context = await s.context(t);
    await threadOpen(s.service, s.stores.conversations)(t, context);
    expect(s.service.calls).toEqual([]);
    expect(context.threadRecorded).toBeUndefined();
  });
});
