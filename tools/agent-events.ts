/**
 * Events of Slack's agent surface as Slack shapes them (the `event` inside the envelope):
 * its stop control pressed, the app's Messages tab opened, an assistant thread started, the
 * channel a person looks at changed. Wrap them with `eventEnvelope` for Socket Mode; the
 * signed HTTP request does it itself.
 */
import { DEFAULT_TEAM, nextTs, type Payload } from "./slack-events.js";

/** `agent_session_stopped`: someone pressed Slack's stop control on the thread's session. */
export function agentSessionStopped(fields: {
  channel: string;
  thread_ts: string;
  user: string;
  /** The app's streams Slack stopped; default none. */
  streaming_message_ts?: string[];
}): Payload {
  return {
    type: "agent_session_stopped",
    channel: fields.channel,
    thread_ts: fields.thread_ts,
    user: fields.user,
    streaming_message_ts: fields.streaming_message_ts ?? [],
    event_ts: nextTs(),
  };
}

/** `app_home_opened`: a person opened one of the app's tabs; `messages` starts a conversation. */
export function appHomeOpened(fields: {
  user: string;
  /** The person's DM with the app. */
  channel: string;
  /** Default "messages". */
  tab?: "home" | "messages";
}): Payload {
  return {
    type: "app_home_opened",
    user: fields.user,
    channel: fields.channel,
    tab: fields.tab ?? "messages",
    event_ts: nextTs(),
  };
}

/** `assistant_thread_started`: a person opened a new assistant thread (the assistant view). */
export function assistantThreadStarted(fields: {
  user: string;
  channel: string;
  /** Default: a fresh ts. */
  thread_ts?: string;
  /** The channel the person was looking at, if any. */
  contextChannel?: string;
}): Payload {
  return {
    type: "assistant_thread_started",
    assistant_thread: {
      user_id: fields.user,
      context: {
        ...(fields.contextChannel === undefined ? {} : { channel_id: fields.contextChannel }),
        team_id: DEFAULT_TEAM,
        enterprise_id: null,
      },
      channel_id: fields.channel,
      thread_ts: fields.thread_ts ?? nextTs(),
    },
    event_ts: nextTs(),
  };
}

/** `app_context_changed`: a person with the app open moved to another channel. */
export function appContextChanged(fields: {
  user: string;
  channel: string;
  /** The channel now in view. */
  viewing: string;
}): Payload {
  return {
    type: "app_context_changed",
    channel: fields.channel,
    user: fields.user,
    context: {
      entities: [{ type: "slack#/types/channel_id", value: fields.viewing, team_id: DEFAULT_TEAM }],
    },
    event_ts: nextTs(),
  };
}
