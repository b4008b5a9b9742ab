/**
 * Events API payloads as Slack shapes them: message events, app mentions and the
 * `event_callback` envelope, with Slack-like ts values.
 */
import { randomUUID } from "node:crypto";

export const DEFAULT_TEAM = "T0001";
export const DEFAULT_APP = "A1";
export const DEFAULT_BOT_USER = "UBOT";

export type Payload = Record<string, unknown>;

let lastTsMicros = 0n;

/**
 * A unique Slack-like ts ("1700000000.000100") from the wall clock, strictly increasing
 * across calls in this process.
 */
export function nextTs(nowMs: number = Date.now()): string {
  const fromClock = BigInt(Math.floor(nowMs)) * 1000n;
  lastTsMicros = fromClock > lastTsMicros ? fromClock : lastTsMicros + 1n;
  const seconds = lastTsMicros / 1_000_000n;
  const micros = (lastTsMicros % 1_000_000n).toString().padStart(6, "0");
  return `${seconds}.${micros}`;
}

export interface MessageFields {
  channel: string;
  user: string;
  text: string;
  /** Default: a fresh {@link nextTs}. */
  ts?: string;
  thread_ts?: string;
  /** The event's `team`; default the installation's, "T0001". */
  team?: string;
  /**
   * The writer's own workspace when it is not the installation's (a Slack Connect channel):
   * Slack then sets `team`, `user_team` and `source_team` to it, while the envelope still
   * names the installation.
   */
  userTeam?: string;
  files?: unknown[];
}

function messageBase(type: string, fields: MessageFields): Payload {
  const ts = fields.ts ?? nextTs();
  const event: Payload = {
    type,
    user: fields.user,
    text: fields.text,
    ts,
    channel: fields.channel,
    event_ts: ts,
    team: fields.userTeam ?? fields.team ?? DEFAULT_TEAM,
    client_msg_id: randomUUID(),
  };
  if (fields.userTeam !== undefined) {
    event.user_team = fields.userTeam;
    event.source_team = fields.userTeam;
  }
  if (fields.thread_ts !== undefined) event.thread_ts = fields.thread_ts;
  if (fields.files !== undefined) event.files = fields.files;
  return event;
}

/** An `app_mention` event; the text should contain `<@UBOT>` as Slack delivers it. */
export function appMention(fields: MessageFields): Payload {
  return messageBase("app_mention", fields);
}

export interface MessageEventFields extends MessageFields {
  channel_type: "im" | "channel" | "group" | "mpim";
  subtype?: string;
  bot_id?: string;
}

/** A `message` event (message.im, message.channels, …). */
export function messageEvent(fields: MessageEventFields): Payload {
  const event = messageBase("message", fields);
  event.channel_type = fields.channel_type;
  if (fields.subtype !== undefined) event.subtype = fields.subtype;
  if (fields.bot_id !== undefined) {
    event.bot_id = fields.bot_id;
    delete event.client_msg_id;
  }
  return event;
}

export interface EnvelopeOptions {
  /** Default: a fresh "Ev…" id. Reuse it to model a retry of the same event. */
  eventId?: string;
  /** The installation's workspace (`team_id`, `authorizations`); default "T0001", whatever the event's `team`. */
  teamId?: string;
  /** `authorizations[0].enterprise_id`; default null (not an Enterprise org). */
  enterpriseId?: string;
  /**
   * An org-wide installation received it: `authorizations[0]` names the org and no team
   * (`team_id` null, `is_enterprise_install` true); the envelope's `team_id` stays the
   * workspace where it happened. Default false.
   */
  enterpriseInstall?: boolean;
  /**
   * `is_ext_shared_channel`; default true when the event's `user_team` is another workspace
   * than the installation's.
   */
  sharedChannel?: boolean;
  apiAppId?: string;
  /** The bot user in `authorizations`. Default "UBOT". */
  botUserId?: string;
  /** `event_time` in seconds. Default now. */
  eventTime?: number;
}

/**
 * The `event_callback` envelope Slack wraps every Events API event in. It names the
 * installation that receives the event, which in a shared channel is not the writer's team.
 */
export function eventEnvelope(event: Payload, opts: EnvelopeOptions = {}): Payload {
  const teamId = opts.teamId ?? DEFAULT_TEAM;
  const userTeam = typeof event.user_team === "string" ? event.user_team : undefined;
  return {
    token: "verification-token",
    team_id: teamId,
    api_app_id: opts.apiAppId ?? DEFAULT_APP,
    event,
    type: "event_callback",
    event_id: opts.eventId ?? `Ev${randomUUID().replace(/-/g, "").slice(0, 10).toUpperCase()}`,
    event_time: opts.eventTime ?? Math.floor(Date.now() / 1000),
    ...(opts.enterpriseId === undefined ? {} : { enterprise_id: opts.enterpriseId }),
    authorizations: [
      {
        enterprise_id: opts.enterpriseId ?? null,
        team_id: opts.enterpriseInstall ? null : teamId,
        user_id: opts.botUserId ?? DEFAULT_BOT_USER,
        is_bot: true,
        is_enterprise_install: opts.enterpriseInstall ?? false,
      },
    ],
    is_ext_shared_channel: opts.sharedChannel ?? (userTeam !== undefined && userTeam !== teamId),
    event_context: `4-${randomUUID()}`,
  };
}
