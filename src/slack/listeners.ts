import type { AcceptResult, Bridge } from "../bridge/bridge.js";
import type { Logger } from "../logger.js";
import { settleWithin } from "../time.js";
import type { BoltApp } from "./app.js";
import { EventNotRecorded } from "./event-not-recorded.js";
import { parseMessageEvent } from "./inbound-event.js";
import { slackTextToPlain, stripBotMention } from "./inbound-text.js";
import { mentionedUserIds, type UserDirectory } from "./user-directory.js";
import type { SlackWebApi } from "./web-api.js";

/** Told, only to the person, when a message of theirs is not queued (too many waiting). */
export const OVER_LIMIT_NOTE =
  "You already have several questions waiting for an answer, so this one was not passed on. Please ask it again once those are answered.";

/** Longest wait for people's names before a message is recorded anyway, ms. */
const NAME_LOOKUP_MS = 1_000;

export interface ListenerDeps {
  bridge: Bridge;
  users: UserDirectory;
  /** Notes only the person sees, in the thread of their message. */
  slack: Pick<SlackWebApi, "postEphemeral">;
  logger: Logger;
  onInbound?: (result: string) => void;
}

/**
 * Message entry points: `app_mention` in channels, `message` everywhere. Slack's
 * acknowledgement is sent when the listener returns (app.ts), so the turn is recorded
 * first; the listener therefore only normalizes and hands over, and the answer is worked
 * on after it returns. A turn that cannot be recorded throws EventNotRecorded: Slack is
 * not acknowledged and delivers the event again.
 */
export function registerMessageListeners(app: BoltApp, deps: ListenerDeps): void {
  const handle = async (
    event: unknown,
    teamId: string | undefined,
    botUserId: string | undefined,
  ) => {
    const parsed = parseMessageEvent(event, teamId, botUserId);
    if (parsed.kind === "malformed") {
      deps.logger.warn({ issues: parsed.issues }, "dropped a malformed Slack event");
      deps.onInbound?.("malformed");
      return;
    }
    if (parsed.kind === "ignored") {
      deps.logger.debug({ reason: parsed.reason }, "ignored a Slack event");
      return;
    }
    const { rawText, ...inbound } = parsed.inbound;
    const others = mentionedUserIds(rawText).filter((id) => id !== botUserId);
    // Names of people not yet known are looked up (users.info), but never for long: the
    // acknowledgement waits for this listener, and an id is readable enough.
    if (others.length > 0) await settleWithin(deps.users.resolve(others), NAME_LOOKUP_MS);
    const withoutBot = botUserId ? stripBotMention(rawText, botUserId) : rawText.trim();
    const text = slackTextToPlain(withoutBot, { user: (id) => deps.users.name(id) }).trim();
    let result: AcceptResult;
    try {
      result = deps.bridge.accept({ ...inbound, text });
    } catch (error) {
      // Acknowledged, the question would be lost: refused, Slack delivers it again.
      deps.logger.error(
        { err: errorName(error), channel: inbound.channel, ts: inbound.ts },
        "could not record a Slack message; Slack will deliver it again",
      );
      throw new EventNotRecorded(error);
    }
    deps.onInbound?.(result);
    if (result === "over_limit") {
      const { channel, user, threadTs } = inbound;
      const note = { channel, user, thread_ts: threadTs, text: OVER_LIMIT_NOTE };
      void deps.slack
        .postEphemeral(note)
        .catch((error: unknown) =>
          deps.logger.warn({ err: errorName(error) }, "could not post the over-limit note"),
        );
    }
    deps.logger.debug({ result, channel: inbound.channel, ts: inbound.ts }, "inbound message");
  };

  app.event("app_mention", async ({ event, context, body }) => {
    await handle(event, teamOf(body, context.teamId), context.botUserId);
  });
  app.event("message", async ({ event, context, body }) => {
    await handle(event, teamOf(body, context.teamId), context.botUserId);
  });
}

function teamOf(body: unknown, fallback: string | undefined): string | undefined {
  const teamId = (body as { team_id?: unknown } | undefined)?.team_id;
  return typeof teamId === "string" ? teamId : fallback;
}

function errorName(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : typeof error;
}
