import type { types as Slack } from "@slack/bolt";
import type { AssistantChoice } from "../../config-people.js";
import type { RunSettings } from "../../service/schemas.js";
import { escapeMrkdwn } from "../render/mrkdwn.js";

/**
 * The App Home as one person sees it, as a pure function of what the bot knows: whether
 * their token is linked, their settings per channel, their assistant for DMs, and one page of
 * their recent conversations. Slack refuses a view of more than 100 blocks, so every list is
 * cut to a page and the whole is checked against the limit.
 */

export const HOME_LINK_ACTION = "home_link";
export const HOME_UNLINK_ACTION = "home_unlink";
export const HOME_DM_ASSISTANT_ACTION = "home_dm_assistant";
export const HOME_FILTER_ACTION = "home_thread_filter";
export const HOME_PAGE_ACTION = "home_threads_page";

/** Slack's limit of blocks in a view. */
export const MAX_BLOCKS = 100;
/** Conversations shown per page of the Home. */
export const THREADS_PER_PAGE = 15;
/** Channels whose settings are listed, at most. */
const SETTINGS_SHOWN = 20;

export interface HomeThread {
  id: string;
  title: string | undefined;
  /** When it was created, epoch ms, if the service says. */
  createdAt: number | undefined;
  /** A link to its Slack thread, where the bot knows it. */
  slackUrl: string | undefined;
}

export interface HomeState {
  linking: "off" | "linked" | "unlinked";
  mode: "shared" | "either" | "personal";
  assistants: readonly AssistantChoice[];
  /** The person's assistant for DMs and the agent view. */
  dmAssistant: AssistantChoice;
  settings: readonly { channel: string; settings: RunSettings; assistant: string }[];
  /** Which assistant's conversations are listed, and the page (0: newest). */
  filter: AssistantChoice;
  page: number;
  /** Every conversation listed for the filter, newest first; undefined: not listed. */
  threads: readonly HomeThread[] | undefined;
  /** Why the conversations are not listed, when they are not. */
  threadsNote?: string;
}

type Block = Slack.KnownBlock;

const text = (t: string): Slack.MrkdwnElement => ({ type: "mrkdwn", text: t });
const plain = (t: string): Slack.PlainTextElement => ({ type: "plain_text", text: t.slice(0, 75) });
const option = (a: AssistantChoice): Slack.PlainTextOption => ({
  text: plain(a.label),
  value: a.id,
});

export function homeView(state: HomeState): Slack.HomeView {
  const blocks: Block[] = [
    { type: "header", text: plain("Your assistant") },
    ...linkBlocks(state),
    { type: "divider" },
    ...assistantBlocks(state),
    ...settingsBlocks(state),
    { type: "divider" },
    ...threadBlocks(state),
  ];
  // Never reached with the page sizes above; a guard so a change of them cannot break the Home.
  return { type: "home", blocks: blocks.slice(0, MAX_BLOCKS) };
}

function linkBlocks(state: HomeState): Block[] {
  if (state.linking === "off") {
    return [
      {
        type: "context",
        elements: [text("Questions use the bot's shared access to the assistant service.")],
      },
    ];
  }
  const linked = state.linking === "linked";
  const said = linked
    ? ":white_check_mark: Your own access token is linked: your questions go to the assistant as you."
    : state.mode === "personal"
      ? ":warning: Link your own access token to ask the assistant."
      : "You have no access token linked; your questions use the bot's shared access.";
  return [
    {
      type: "section",
      text: text(said),
      accessory: {
        type: "button",
        action_id: linked ? HOME_UNLINK_ACTION : HOME_LINK_ACTION,
        text: plain(linked ? "Unlink" : "Link token"),
        value: linked ? "unlink" : "link",
        ...(linked ? {} : { style: "primary" as const }),
      },
    },
  ];
}

function assistantBlocks(state: HomeState): Block[] {
  if (state.assistants.length < 2) {
    return [{ type: "section", text: text(`Assistant: *${state.dmAssistant.label}*`) }];
  }
  return [
    {
      type: "section",
      text: text("*Your assistant* in direct messages with me and in my Messages tab"),
      accessory: {
        type: "static_select",
        action_id: HOME_DM_ASSISTANT_ACTION,
        options: state.assistants.slice(0, 100).map(option),
        initial_option: option(state.dmAssistant),
      },
    },
  ];
}

function settingsBlocks(state: HomeState): Block[] {
  if (state.settings.length === 0) {
    return [
      {
        type: "context",
        elements: [
          text(
            "You have no settings of your own in any channel (`/assistant model`, `effort`, `steps`).",
          ),
        ],
      },
    ];
  }
  const lines = state.settings.slice(0, SETTINGS_SHOWN).map(({ channel, settings, assistant }) => {
    const model = settings.modelOverride ?? "default";
    const effort = settings.reasoning_effort ?? "default";
    const steps = settings.maxSteps === undefined ? "default" : String(settings.maxSteps);
    return `• <#${channel}>: model *${model}*, effort *${effort}*, steps *${steps}*, assistant *${assistant}*`;
  });
  const more = state.settings.length - lines.length;
  if (more > 0) lines.push(`…and ${more} more channel${more === 1 ? "" : "s"}.`);
  return [
    {
      type: "section",
      text: text(`*Your settings per channel*\n${lines.join("\n")}`.slice(0, 3000)),
    },
  ];
}

function threadBlocks(state: HomeState): Block[] {
  const blocks: Block[] = [{ type: "header", text: plain("Recent conversations") }];
  if (state.assistants.length > 1) {
    blocks.push({
      type: "actions",
      elements: [
        {
          type: "static_select",
          action_id: HOME_FILTER_ACTION,
          options: state.assistants.slice(0, 100).map(option),
          initial_option: option(state.filter),
        },
      ],
    });
  }
  if (state.threads === undefined) {
    blocks.push({
      type: "context",
      elements: [text(state.threadsNote ?? "Conversations cannot be listed right now.")],
    });
    return blocks;
  }
  const pages = Math.max(1, Math.ceil(state.threads.length / THREADS_PER_PAGE));
  const page = Math.min(Math.max(0, state.page), pages - 1);
  const shown = state.threads.slice(page * THREADS_PER_PAGE, (page + 1) * THREADS_PER_PAGE);
  if (shown.length === 0) {
    blocks.push({
      type: "context",
      elements: [text(`No conversations with *${state.filter.label}* yet.`)],
    });
    return blocks;
  }
  for (const thread of shown) blocks.push({ type: "section", text: text(threadLine(thread)) });
  blocks.push({
    type: "context",
    elements: [
      text(
        `Page ${page + 1} of ${pages} · ${state.threads.length} conversation${state.threads.length === 1 ? "" : "s"} with *${state.filter.label}*`,
      ),
    ],
  });
  const nav: Slack.Button[] = [];
  const value = (p: number) => JSON.stringify({ page: p, filter: state.filter.id });
  if (page > 0)
    nav.push({
      type: "button",
      action_id: `${HOME_PAGE_ACTION}_newer`,
      text: plain("Newer"),
      value: value(page - 1),
    });
  if (page < pages - 1)
    nav.push({
      type: "button",
      action_id: `${HOME_PAGE_ACTION}_older`,
      text: plain("Older"),
      value: value(page + 1),
    });
  if (nav.length > 0) blocks.push({ type: "actions", elements: nav });
  return blocks;
}

function threadLine(thread: HomeThread): string {
  const title = escapeMrkdwn(thread.title?.trim() || "Untitled conversation").slice(0, 200);
  const when =
    thread.createdAt === undefined
      ? ""
      : ` · <!date^${Math.floor(thread.createdAt / 1000)}^{date_short_pretty} {time}|${new Date(thread.createdAt).toISOString()}>`;
  const named = thread.slackUrl ? `<${thread.slackUrl}|${title}>` : title;
  return `${named}${when}${thread.slackUrl ? "" : " _(not started in Slack)_"}`;
}
