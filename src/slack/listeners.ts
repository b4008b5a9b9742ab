import type { Bridge } from "../bridge/bridge.js";
import type { Logger } from "../logger.js";
import type { BoltApp } from "./app.js";
import { parseMessageEvent } from "./inbound-event.js";
import { slackTextToPlain, stripBotMention } from "./inbound-text.js";
import { mentionedUserIds, type UserDirectory } from "./user-directory.js";

export interface ListenerDeps {
  bridge: Bridge;
  users: UserDirectory;
  logger: Logger;
  onInbound?: (result: string) => void;
}

/**
 * Message entry points: `app_mention` in channels, `message` everywhere. Bolt has already
 * acknowledged the request when these run (processBeforeResponse is off), so the work
 * here never delays the acknowledgement. A listener only normalizes and hands over.
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
    if (others.length > 0) await deps.users.resolve(others);
    const withoutBot = botUserId ? stripBotMention(rawText, botUserId) : rawText.trim();
    const text = slackTextToPlain(withoutBot, { user: (id) => deps.users.name(id) }).trim();
    const result = deps.bridge.accept({ ...inbound, text });
    deps.onInbound?.(result);
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
