/**
 * Interactivity payloads as Slack shapes them: slash commands (form fields), block actions
 * (buttons and feedback buttons), message shortcuts and view submissions (sent as `payload=<json>`).
 */
import { randomUUID } from "node:crypto";
import {
  DEFAULT_APP,
  DEFAULT_BOT_USER,
  DEFAULT_TEAM,
  nextTs,
  type Payload,
} from "./slack-events.js";

function triggerId(): string {
  return `${Date.now()}.${randomUUID().slice(0, 8)}`;
}

export interface SlashCommandFields {
  /** Default "/assistant". */
  command?: string;
  text: string;
  user_id: string;
  channel_id: string;
  /** The invoking person's workspace; default "T0001". */
  team_id?: string;
  /** Their Enterprise org, when they are in one. */
  enterprise_id?: string;
  response_url: string;
  trigger_id?: string;
  user_name?: string;
  channel_name?: string;
}

/** The form fields of a slash command; post it with kind "command". */
export function slashCommand(fields: SlashCommandFields): Record<string, string> {
  return {
    token: "verification-token",
    team_id: fields.team_id ?? DEFAULT_TEAM,
    team_domain: "fake",
    channel_id: fields.channel_id,
    channel_name: fields.channel_name ?? "general",
    user_id: fields.user_id,
    user_name: fields.user_name ?? fields.user_id.toLowerCase(),
    command: fields.command ?? "/assistant",
    text: fields.text,
    api_app_id: DEFAULT_APP,
    is_enterprise_install: "false",
    response_url: fields.response_url,
    trigger_id: fields.trigger_id ?? triggerId(),
    ...(fields.enterprise_id === undefined ? {} : { enterprise_id: fields.enterprise_id }),
  };
}

function userOf(id: string, team: string): Payload {
  return { id, username: id.toLowerCase(), name: id.toLowerCase(), team_id: team };
}

export interface BlockActionFields {
  user: string;
  channel: string;
  /** The ts of the message holding the button. */
  message_ts: string;
  /** The thread the message is in, when it is a reply. */
  thread_ts?: string;
  action_id: string;
  value: string;
  block_id?: string;
  response_url?: string;
  team?: string;
  trigger_id?: string;
}

/** A `block_actions` payload for a button press; post it with kind "action". */
export function blockAction(fields: BlockActionFields): Payload {
  return actionPayload(fields, { type: "button", block: "actions", text: fields.action_id });
}

export interface FeedbackPressFields extends BlockActionFields {
  /** Which of the element's two buttons was pressed; `value` is that button's value. */
  button: "positive" | "negative";
  /** The pressed button's text; default 👍 or 👎. */
  text?: string;
}

/**
 * A `block_actions` payload for a press of one of the `feedback_buttons` of a
 * `context_actions` block: the element's action_id, the pressed button's value and text.
 */
export function feedbackPress(fields: FeedbackPressFields): Payload {
  const text = fields.text ?? (fields.button === "positive" ? "👍" : "👎");
  return actionPayload(fields, { type: "feedback_buttons", block: "context_actions", text });
}

/** A press of one element (`block`: its default block_id): who, where, on which message. */
function actionPayload(
  fields: BlockActionFields,
  element: { type: string; block: string; text: string },
): Payload {
  const action: Payload = {
    type: element.type,
    action_id: fields.action_id,
    block_id: fields.block_id ?? element.block,
    text: { type: "plain_text", text: element.text, emoji: true },
    value: fields.value,
    action_ts: nextTs(),
  };
  const team = fields.team ?? DEFAULT_TEAM;
  const container: Payload = {
    type: "message",
    message_ts: fields.message_ts,
    channel_id: fields.channel,
    is_ephemeral: false,
  };
  const message: Payload = {
    type: "message",
    ts: fields.message_ts,
    user: DEFAULT_BOT_USER,
    text: "",
  };
  if (fields.thread_ts !== undefined) {
    container.thread_ts = fields.thread_ts;
    message.thread_ts = fields.thread_ts;
  }
  const payload: Payload = {
    type: "block_actions",
    user: userOf(fields.user, team),
    api_app_id: DEFAULT_APP,
    token: "verification-token",
    container,
    trigger_id: fields.trigger_id ?? triggerId(),
    team: { id: team, domain: "fake" },
    is_enterprise_install: false,
    channel: { id: fields.channel, name: "general" },
    message,
    state: { values: {} },
    actions: [action],
  };
  if (fields.response_url !== undefined) payload.response_url = fields.response_url;
  return payload;
}

export interface MessageShortcutFields {
  user: string;
  channel: string;
  callback_id: string;
  /** The message the shortcut was used on. */
  message: { ts: string; text: string; user: string; thread_ts?: string };
  response_url?: string;
  team?: string;
  trigger_id?: string;
}

/** A `message_action` (message shortcut) payload; post it with kind "action". */
export function messageShortcut(fields: MessageShortcutFields): Payload {
  const team = fields.team ?? DEFAULT_TEAM;
  return {
    type: "message_action",
    token: "verification-token",
    action_ts: nextTs(),
    team: { id: team, domain: "fake" },
    user: userOf(fields.user, team),
    channel: { id: fields.channel, name: "general" },
    is_enterprise_install: false,
    callback_id: fields.callback_id,
    trigger_id: fields.trigger_id ?? triggerId(),
    message_ts: fields.message.ts,
    message: { type: "message", ...fields.message },
    response_url: fields.response_url ?? "",
  };
}

export interface ViewSubmissionFields {
  user: string;
  callback_id: string;
  /** `view.state.values`: block_id → action_id → value object. */
  values: Record<string, Record<string, unknown>>;
  private_metadata?: string;
  view_id?: string;
  team?: string;
}

/** A `view_submission` payload for a modal; post it with kind "view". */
export function viewSubmission(fields: ViewSubmissionFields): Payload {
  const team = fields.team ?? DEFAULT_TEAM;
  return {
    type: "view_submission",
    team: { id: team, domain: "fake" },
    user: userOf(fields.user, team),
    api_app_id: DEFAULT_APP,
    token: "verification-token",
    trigger_id: triggerId(),
    is_enterprise_install: false,
    view: {
      id: fields.view_id ?? "V00000001",
      team_id: team,
      type: "modal",
      callback_id: fields.callback_id,
      private_metadata: fields.private_metadata ?? "",
      title: { type: "plain_text", text: "Assistant" },
      blocks: [],
      state: { values: fields.values },
      hash: randomUUID(),
      app_id: DEFAULT_APP,
      bot_id: "BBOT",
    },
    response_urls: [],
  };
}
