import type { AcceptResult, Bridge } from "../../bridge/bridge.js";
import type { Logger } from "../../logger.js";
import { settleWithin } from "../../time.js";
import { type Gatekeeping, REFUSAL_NOTES } from "../admission/admission.js";
import { mentionedUserIds, type UserDirectory } from "../admission/user-directory.js";
import type { BoltApp } from "../installations/app.js";
import type { RequestPlace } from "../installations/installation.js";
import { EventNotRecorded } from "./event-not-recorded.js";
import { parseMessageEvent } from "./inbound-event.js";
import { slackTextToPlain, stripBotMention } from "./inbound-text.js";

/** Told, only to the person, when a message of theirs is not queued (too many waiting). */
export const OVER_LIMIT_NOTE =
  "You already have several questions waiting for an answer, so this one was not passed on. Please ask it again once those are answered.";

/** Longest wait for people's names before a message is recorded anyway, ms. */
const NAME_LOOKUP_MS = 1_000;

export interface ListenerDeps extends Gatekeeping {
  bridge: Bridge;
  /** What Slack says of people, per workspace. */
  users: (team: string) => UserDirectory;
  logger: Logger;
  onInbound?: (result: string) => void;
  /**
   * The note for a person who must link their own token before asking (IDENTITY_MODE
   * personal); undefined: they may ask. Default: everyone may.
   */
  linkFirst?: (person: { team: string; user: string }) => Promise<string | undefined>;
}

/**
 * Message entry points: `app_mention` in channels, `message` everywhere. Slack's
 * acknowledgement is sent when the listener returns, so the turn is recorded first; the
 * listener therefore only decides, normalizes and hands over, and the answer is worked on
 * after it returns.
 *
 * A message that would be answered is first checked against who may use the bot; a person
 * refused gets a note only they see and nothing is recorded, posted or sent to the service.
 *
 * A turn that cannot be recorded throws EventNotRecorded: Slack is not acknowledged (app.ts)
 * and delivers the event again.
 */
export function registerMessageListeners(app: BoltApp, deps: ListenerDeps): void {
  const handle = async (
    event: unknown,
    body: unknown,
    context: RequestPlace & { botUserId?: string | undefined },
  ) => {
    const { botUserId } = context;
    const workspace = await deps.installation.workspace(context);
    const users = deps.users(workspace);
    const parsed = parseMessageEvent(event, workspace, botUserId);
    if (parsed.kind === "malformed") {
      deps.logger.warn({ issues: parsed.issues }, "dropped a malformed Slack event");
      deps.onInbound?.("malformed");
      return;
    }
    if (parsed.kind === "ignored") {
      deps.logger.debug({ reason: parsed.reason }, "ignored a Slack event");
      return;
    }
    const { rawText, authorTeamNamed, ...inbound } = parsed.inbound;
    const { channel, user, threadTs } = inbound;
    // Nobody is looked up or told anything about a message that would not be answered.
    if (!(await deps.bridge.wouldAnswer(inbound))) {
      deps.onInbound?.("ignored");
      deps.logger.debug({ result: "ignored", channel, ts: inbound.ts }, "inbound message");
      return;
    }
    const refusal = await deps.admission(workspace).check({
      user,
      team: inbound.authorTeam,
      confirm: inExternallySharedChannel(body) && !authorTeamNamed,
    });
    if (refusal !== undefined) {
      const told = deps.notes.tell({
        team: workspace,
        channel,
        user,
        threadTs,
        text: REFUSAL_NOTES[refusal],
      });
      deps.onInbound?.("refused");
      deps.logger.info(
        { refusal, authorTeam: inbound.authorTeam, channel, note: told },
        "message refused: the bot does not answer this person",
      );
      return;
    }
    const linkNote = await deps.linkFirst?.({ team: workspace, user });
    if (linkNote !== undefined) {
      deps.notes.tell({ team: workspace, channel, user, threadTs, text: linkNote });
      deps.onInbound?.("not_linked");
      deps.logger.info({ user, channel }, "message not passed on: the person has no token linked");
      return;
    }
    // Names of people not yet known are looked up (users.info), within the directory's bounds
    // per message and per writer, and never for long: the acknowledgement waits for this
    // listener, and an id is readable enough (`@U…`, as for any name not looked up). A person
    // past the limit of waiting questions is told so (accept records it), and the message
    // costs no name lookup: that limit comes before them. A message naming nobody else costs
    // no count either.
    const others = mentionedUserIds(rawText).filter((id) => id !== botUserId);
    if (others.length > 0 && !(await deps.bridge.overLimit(workspace, user))) {
      await settleWithin(users.resolveMentioned(others, user), NAME_LOOKUP_MS);
    }
    const withoutBot = botUserId ? stripBotMention(rawText, botUserId) : rawText.trim();
    const text = slackTextToPlain(withoutBot, { user: (id) => users.name(id) }).trim();
    // Awaited: Slack is acknowledged only once the turn is recorded.
    const result: AcceptResult = await deps.bridge.accept({ ...inbound, text });
    deps.onInbound?.(result);
    if (result === "over_limit") {
      deps.notes.tell({ team: workspace, channel, user, threadTs, text: OVER_LIMIT_NOTE });
    }
    deps.logger.debug({ result, channel, ts: inbound.ts }, "inbound message");
  };

  /**
   * Whatever failed on the way to the record (the database out of reach for a lookup, an
   * admission check or the record itself), the event is not acknowledged: acknowledged, its
   * question would be lost. Slack delivers it again, and a retry of a question already
   * recorded is answered once.
   */
  const handleOrRefuse = async (
    event: unknown,
    body: unknown,
    context: RequestPlace & { botUserId?: string | undefined },
  ) => {
    try {
      await handle(event, body, context);
    } catch (error) {
      const { channel, ts } = (event ?? {}) as { channel?: unknown; ts?: unknown };
      deps.logger.error(
        { err: errorName(error), channel, ts },
        "could not record a Slack message; Slack will deliver it again",
      );
      throw new EventNotRecorded(error);
    }
  };
  app.event("app_mention", async ({ event, context, body }) => {
    await handleOrRefuse(event, body, context);
  });
  app.event("message", async ({ event, context, body }) => {
    await handleOrRefuse(event, body, context);
  });
}

/** The envelope says the channel is shared with other organisations (Slack Connect). */
function inExternallySharedChannel(body: unknown): boolean {
  return (body as { is_ext_shared_channel?: unknown } | undefined)?.is_ext_shared_channel === true;
}

function errorName(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : typeof error;
}
