import { TurnLife } from "../../src/bridge/turn/turn-life.js";
import { TurnReply } from "../../src/bridge/turn/turn-reply.js";
import type { StepContext } from "../../src/bridge/turn/turn-step.js";
import { memoryStores } from "../../src/store/in-memory.js";
import type { Turn } from "../../src/store/turn.js";
import { FakeReplies } from "./fake-replies.js";
import { FakeService } from "./fake-service.js";
import { ManualClock } from "./manual-clock.js";

/** In-memory stores, a fake service and a turn ready for one step, in a thread "thread-9". */
export async function stepSetup() {
  const clock = new ManualClock();
  const stores = memoryStores(() => clock.now());
  const service = new FakeService();
  const replies = new FakeReplies();
  const c = await stores.conversations.ensure({ team: "T1", channel: "C1", threadTs: "1.1" }, "a");
  await stores.conversations.setServiceThread(c.id, "thread-9", "shared");
  let n = 0;
  const turn = async (content = "What is up?"): Promise<Turn> =>
    (
      await stores.turns.record({
        conversation: c,
        assistant: c.assistantId,
        team: "T1",
        channel: "C1",
        threadTs: "1.1",
        messageTs: `1.${++n}`,
        user: "U1",
        content,
        notes: [],
      })
    ).turn as Turn;
  /** The context a step gets for `t` (the outage policy gives up at once). */
  const context = async (t: Turn): Promise<StepContext> => {
    const life = new TurnLife(t, new TurnReply(replies, stores.turns, t));
    const conversation = (await stores.conversations.byId(c.id)) ?? c;
    const outage = { giveUpAfterMs: 0, clock, onRetry: () => {} };
    return { life, conversation, outage, party: t.user, landing: [] };
  };
  /** Brings `t` to `composed` with its own content. */
  const composed = async (t: Turn) =>
    await stores.turns.recordContent(t.id, {
      serviceContent: t.content,
      contextThroughTs: null,
      notes: [],
    });
  return { clock, stores, service, replies, turn, context, composed };
}
