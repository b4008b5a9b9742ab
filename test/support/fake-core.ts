import { Relay } from "../../src/bridge/turn/relay.js";
import { TurnContent } from "../../src/bridge/turn/turn-content.js";
import { type TurnLimits, TurnRunner } from "../../src/bridge/turn/turn-runner.js";
import type { Stores } from "../../src/store/stores.js";
import type { Clock } from "../../src/time.js";
import { FakeReplies } from "./fake-replies.js";
import { FakeService } from "./fake-service.js";

export const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * The real turn runner over `stores`, a fake service (its own unless given: replicas share
 * one) and fake replies, without thread context.
 */
export function fakeCore(
  stores: Stores,
  clock: Clock,
  limits: TurnLimits,
  service = new FakeService(),
) {
  const { turns, conversations, settings } = stores;
  const replies = new FakeReplies();
  const content = new TurnContent({
    history: undefined,
    turns,
    conversations,
    logger: quiet,
    budgetChars: 0,
  });
  const runner = new TurnRunner({
    service,
    relay: new Relay(service),
    ...{ turns, conversations, settings, content, limits, clock },
    logger: quiet,
  });
  return { service, replies, runner };
}
