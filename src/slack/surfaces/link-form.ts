import type { types as Slack } from "@slack/bolt";
import type { Logger } from "../../logger.js";
import type { TokenVerdict } from "../../people/token-check.js";
import { type Gatekeeping, REFUSAL_NOTES } from "../admission/admission.js";
import type { BoltApp } from "../installations/app.js";
import type { SlackWebApi } from "../web-api/web-api.js";
import { LINK_VIEW_ID, type LinkTokenIntake, TOKEN_ACTION, TOKEN_BLOCK } from "./link-token.js";

export { LINK_VIEW_ID, TOKEN_ACTION, TOKEN_BLOCK };

/** Said when linking is asked for without TOKEN_ENCRYPTION_KEY. */
export const LINKING_OFF =
  "Linking your own access token is off in this workspace: the bot's operator has not set an encryption key for tokens, so questions use the bot's shared access.";

/** Longest token the form takes, characters. */
const TOKEN_MAX = 4_000;

export interface LinkFormDeps extends Gatekeeping {
  /** Keeps a token sealed for the person (people/token-vault.ts). */
  link: (owner: { team: string; user: string }, token: string) => Promise<void>;
  /**
   * Where the submitted token waits (link-token.ts): it was taken out of the payload where the
   * payload entered, and the field holds a handle to claim it with.
   */
  tokens: Pick<LinkTokenIntake, "claim">;
  /** Checks a token with a cheap authenticated request before it is kept. */
  check: (user: string, token: string) => Promise<TokenVerdict>;
  /** LINK_TOKEN_HELP: where a person gets their token. */
  help: string;
  /** The Web API of a workspace. */
  slack: (team: string) => Pick<SlackWebApi, "openView">;
  logger: Logger;
  /** A person linked a token (their App Home is published again). */
  onLinked?: (owner: { team: string; user: string }) => void;
}

/** The form: where a token comes from, a field for it; the token is never shown back. */
export function linkForm(help: string): Slack.ModalView {
  return {
    type: "modal",
    callback_id: LINK_VIEW_ID,
    title: { type: "plain_text", text: "Link your token" },
    submit: { type: "plain_text", text: "Link" },
    close: { type: "plain_text", text: "Cancel" },
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: "Paste your own access token for the assistant service. The bot checks it, keeps it encrypted, and asks the assistant as you from then on. It is never shown again; `/assistant unlink` forgets it.",
        },
      },
      { type: "context", elements: [{ type: "plain_text", text: help }] },
      {
        type: "input",
        block_id: TOKEN_BLOCK,
        label: { type: "plain_text", text: "Access token" },
        element: {
          type: "plain_text_input",
          action_id: TOKEN_ACTION,
          max_length: TOKEN_MAX,
          placeholder: { type: "plain_text", text: "Paste your token here" },
        },
      },
    ],
  };
}

/** What the modal becomes once the token is kept. */
function linkedView(): Slack.ModalView {
  return {
    type: "modal",
    callback_id: LINK_VIEW_ID,
    title: { type: "plain_text", text: "Token linked" },
    close: { type: "plain_text", text: "Done" },
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: ":white_check_mark: Your access token works and is linked. Your questions now go to the assistant as you.",
        },
      },
    ],
  };
}

const REFUSED =
  "The assistant service refused this token. Check that it is complete and still valid.";
const UNREACHABLE =
  "The assistant service could not be reached to check this token. Please try again in a moment.";
const UNREAD = "The form could not be read. Please paste your token again.";

/**
 * The link form's submission: the token is checked with the service before it is kept; a
 * refusal is shown in the form (the token is not kept), success turns the form into a
 * confirmation. The token is in no answer, no log line and no message: the payload reaches
 * Bolt with a handle in its place (link-token.ts), and only a handle is taken here.
 */
export function registerLinkForm(app: BoltApp, deps: LinkFormDeps): void {
  app.view(LINK_VIEW_ID, async ({ ack, body, view, context }) => {
    const entered = view.state.values[TOKEN_BLOCK]?.[TOKEN_ACTION]?.value ?? "";
    // Claimed first, so the token is held no longer than this submission.
    const claimed = entered === "" ? "" : deps.tokens.claim(entered);
    const refuse = (text: string) =>
      ack({ response_action: "errors", errors: { [TOKEN_BLOCK]: text } });
    const user = body.user.id;
    if (claimed === undefined) {
      // Not withdrawn where the payload entered: whatever it holds is not used.
      deps.logger.warn({ user }, "a link form arrived with no withdrawn token; refused");
      return refuse(UNREAD);
    }
    const token = claimed.trim();
    const team = await deps.installation.workspace(context);
    const refusal = await deps.admission(team).check({
      user,
      team: body.user.team_id ?? body.team?.id,
      enterprise: body.team?.enterprise_id,
    });
    if (refusal !== undefined) return refuse(REFUSAL_NOTES[refusal]);
    if (token === "") return refuse("Please paste your token.");
    if (/\s/.test(token)) return refuse("A token has no spaces or line breaks in it.");
    const verdict = await deps.check(user, token);
    if (verdict !== "ok") {
      deps.logger.info({ user, verdict }, "a token was not linked");
      return refuse(verdict === "refused" ? REFUSED : UNREACHABLE);
    }
    // Kept before the form says so: a failure leaves the form as it is (Bolt's error).
    await deps.link({ team, user }, token);
    deps.logger.info({ user }, "a person linked their own token");
    await ack({ response_action: "update", view: linkedView() });
    deps.onLinked?.({ team, user });
  });
}
