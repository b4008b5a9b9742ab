import type { Bridge } from "../bridge/bridge.js";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import { registerAgentHome } from "../slack/agent-home.js";
import type { BoltApp } from "../slack/app.js";
import { registerControls } from "../slack/controls.js";
import { registerFeedback } from "../slack/feedback.js";
import { registerMessageListeners } from "../slack/listeners.js";
import { registerNativeStop } from "../slack/native-stop.js";
import { registerShortcut } from "../slack/shortcut.js";
import type { Stores } from "../store/stores.js";
import type { wireSlack } from "./slack.js";

export interface ListenerParts {
  config: Config;
  stores: Stores;
  bridge: Bridge;
  slack: ReturnType<typeof wireSlack>;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Every Slack entry point, each given the same rule of who may use the bot (`trust`):
 * messages, `/assistant` and the Stop button, the shortcut, feedback presses, Slack's own
 * stop control and the app's Messages tab.
 */
export function registerListeners(app: BoltApp, parts: ListenerParts): void {
  const { config, stores, bridge, slack, metrics, logger } = parts;
  const { users, installation, admission, notes } = slack;
  const trust = { installation, admission, notes };
  const onInbound = (result: string) => metrics.inbound.inc({ result });
  registerMessageListeners(app, { bridge, users, ...trust, logger, onInbound });
  registerControls(app, {
    bridge,
    settings: stores.settings,
    logger,
    slack: slack.slack,
    ...trust,
  });
  registerShortcut(app, {
    bridge,
    logger,
    slack: slack.slack,
    ...trust,
    postQuestion: slack.postQuestion,
  });
  registerFeedback(app, {
    turns: stores.turns,
    feedback: stores.feedback,
    logger,
    ...trust,
    onRecorded: (value) => metrics.feedback.inc({ value }),
  });
  registerNativeStop(app, { bridge, sessions: slack.agent.sessions, ...trust, logger });
  registerAgentHome(app, {
    offer: config.agent.suggestedPrompts,
    prompts: slack.agent.prompts,
    installation,
    logger,
  });
}
