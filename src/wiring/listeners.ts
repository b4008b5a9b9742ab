import type { Bridge } from "../bridge/bridge.js";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import { linkNote } from "../people/link-notices.js";
import { checkToken } from "../people/token-check.js";
import type { ServiceClient } from "../service/client.js";
import { registerAgentHome } from "../slack/agent/agent-home.js";
import type { BoltApp } from "../slack/installations/app.js";
import type { Workspaces } from "../slack/installations/installation.js";
import type { Installations } from "../slack/installations/installations.js";
import { registerUninstall } from "../slack/installations/uninstall.js";
import { registerMessageListeners } from "../slack/receiving/listeners.js";
import { registerNativeStop } from "../slack/replies/native-stop.js";
import { AppHome, registerAppHome } from "../slack/surfaces/app-home.js";
import { registerControls } from "../slack/surfaces/controls.js";
import { registerFeedback } from "../slack/surfaces/feedback.js";
import { registerLinkForm } from "../slack/surfaces/link-form.js";
import type { LinkTokenIntake } from "../slack/surfaces/link-token.js";
import { registerShortcut } from "../slack/surfaces/shortcut.js";
import type { Stores } from "../store/stores.js";
import type { People } from "./people.js";
import type { wireSlack } from "./slack.js";

export interface ListenerParts {
  config: Config;
  stores: Stores;
  bridge: Bridge;
  slack: ReturnType<typeof wireSlack>;
  metrics: Metrics;
  logger: Logger;
  /** People's tokens and assistants (wiring/people.ts). */
  people: People;
  /** The service client: a token being linked is checked with it, the App Home lists threads. */
  service: ServiceClient;
  /** Where the link form's tokens wait, taken out of the payloads they came in (app.ts). */
  linkTokens: LinkTokenIntake;
  /** Many workspaces: their installations, which uninstalls remove; undefined: one. */
  installations: Installations | undefined;
  workspaces: Workspaces;
}

/**
 * Every Slack entry point, each given the same rule of who may use the bot (`trust`):
 * messages, `/assistant` and the Stop button, the shortcut, feedback presses, Slack's own
 * stop control and the app's Messages tab.
 */
export function registerListeners(app: BoltApp, parts: ListenerParts): void {
  const { config, stores, bridge, slack, metrics, logger, installations } = parts;
  if (installations) {
    registerUninstall(app, {
      installations,
      workspaces: parts.workspaces,
      abandon: (team, gone) => bridge.abandon(team, gone),
      logger,
    });
  }
  const { users, installation, admission, notes } = slack;
  const trust = { installation, admission, notes };
  const onInbound = (result: string) => metrics.inbound.inc({ result });
  const { identities } = parts.people;
  const linkFirst = async (owner: { team: string; user: string }) =>
    (await identities.mustLink(owner))
      ? linkNote("not_linked", config.people.linkTokenHelp)
      : undefined;
  registerMessageListeners(app, { bridge, users, ...trust, logger, onInbound, linkFirst });
  const { vault, assistants } = parts.people;
  const help = config.people.linkTokenHelp;
  const home = new AppHome({
    vault,
    mode: config.people.identityMode,
    assistants,
    settings: stores.settings,
    conversations: stores.conversations,
    turns: stores.turns,
    // Without a person's credential: the bot's own call, with the shared token.
    listThreads: (filter, credential) =>
      parts.service.listThreads(filter, { ...(credential && { credential }), maxPages: 10 }),
    slack: slack.slack,
    whoAmI: (team) => installation.whoAmI(team),
    help,
    logger,
    ...trust,
  });
  const republish = ({ team, user }: { team: string; user: string }) =>
    void home.publish(team, user);
  registerControls(app, {
    bridge,
    settings: stores.settings,
    logger,
    slack: slack.slack,
    ...trust,
    people: {
      vault,
      assistants,
      identityMode: config.people.identityMode,
      help,
      slack: slack.slack,
      whoAmI: (team) => installation.whoAmI(team),
      logger,
      onChanged: republish,
    },
  });
  registerLinkForm(app, {
    ...trust,
    tokens: parts.linkTokens,
    link: (owner, token) => vault.link(owner, token),
    check: (user, token) =>
      checkToken(parts.service, {
        user,
        token,
        assistantId: assistants.default.id,
        timeoutMs: 2_500,
      }),
    help,
    slack: slack.slack,
    logger,
    onLinked: republish,
  });
  registerAppHome(app, home);
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
