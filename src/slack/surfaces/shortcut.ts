import type { MessageShortcut } from "@slack/bolt";
import { z } from "zod";
import type { Bridge } from "../../bridge/bridge.js";
import type { Logger } from "../../logger.js";
import { settleWithin } from "../../time.js";
import { type Author, type Gatekeeping, REFUSAL_NOTES } from "../admission/admission.js";
import type { BoltApp } from "../installations/app.js";
import { classifyCallFailure } from "../web-api/call-failure.js";
import type { SlackWebApi } from "../web-api/web-api.js";

/** The message shortcut's callback_id (manifest.yml names the same). */
export const ASK_SHORTCUT_ID = "ask_assistant";
/** The modal's callback_id. */
export const ASK_VIEW_ID = "ask_assistant_question";
/** The question field: its block_id and action_id. */
export const QUESTION_BLOCK = "question";
export const QUESTION_ACTION = "question";

/** Told when the shortcut's question was posted but could not be recorded (disk full, say). */
export const NOT_RECORDED_NOTE =
  "Your question was posted, but the bot could not record it, so it will not be answered. Please ask it again in a moment.";

/** Longest question the modal takes, characters (Slack's limit for a plain text input). */
const QUESTION_MAX = 3_000;
/** How much of the message the modal quotes, characters (a section holds 3,000). */
const QUOTE_MAX = 2_000;

export interface ShortcutDeps extends Gatekeeping {
  bridge: Bridge;
  logger: Logger;
  /** Opens the question modal. */
  /** The Web API of a workspace. */
  slack: (team: string) => Pick<SlackWebApi, "openView">;
  /**
   * Posts the question visibly in the thread (through the post gate, like every reply);
   * resolves with its ts, or throws the Web API client's error.
   */
  postQuestion: (
    target: { team: string; channel: string; threadTs: string },
    text: string,
  ) => Promise<string>;
  /**
   * How long a submission waits for that post before the modal closes anyway, ms; default
   * 2_000 (Slack wants the answer within 3 s). A post that fails within it is shown in the
   * modal; a later failure is only logged.
   */
  ackWithinMs?: number;
}

/** Where the question goes, carried through the modal's private_metadata. */
const Metadata = z.object({
  channel: z.string().min(1),
  threadTs: z.string().regex(/^\d+\.\d+$/),
  messageTs: z.string().regex(/^\d+\.\d+$/),
});

/**
 * "Ask the assistant", a message shortcut: it opens a modal quoting the message with a field
 * for the question. On submission the bot posts "<@person> asked: …" in the message's thread
 * and answers that as if the person had mentioned the bot there: the posted question's ts is
 * the turn's message ts (it keys the turn, so the answer is recorded once), and the thread's
 * messages before it are passed on as for a mention.
 *
 * The question is posted before the modal closes where Slack allows the time, so that a bot
 * that may not post in this channel says so in the modal instead of failing silently.
 */
export function registerShortcut(app: BoltApp, deps: ShortcutDeps): void {
  app.shortcut<MessageShortcut>(ASK_SHORTCUT_ID, async ({ ack, shortcut, context }) => {
    await ack();
    const team = await deps.installation.workspace(context);
    // A person who may not use the bot gets the note instead of the modal.
    const refusal = await deps.admission(team).check(authorOf(shortcut));
    if (refusal !== undefined) {
      const { id: user } = shortcut.user;
      deps.notes.tell({ team, channel: shortcut.channel.id, user, text: REFUSAL_NOTES[refusal] });
      return;
    }
    const message = shortcut.message;
    const metadata: z.infer<typeof Metadata> = {
      channel: shortcut.channel.id,
      threadTs: typeof message.thread_ts === "string" ? message.thread_ts : message.ts,
      messageTs: message.ts,
    };
    // Not awaited: Slack gets its acknowledgement while the modal opens.
    void deps
      .slack(team)
      .openView({
        trigger_id: shortcut.trigger_id,
        view: questionModal(metadata, message.user, message.text ?? ""),
      })
      .catch((error: unknown) => {
        deps.logger.warn({ err: String(error) }, "could not open the question modal");
      });
  });

  app.view(ASK_VIEW_ID, async ({ ack, body, view, context }) => {
    const metadata = Metadata.safeParse(parseJson(view.private_metadata));
    const question = (view.state.values[QUESTION_BLOCK]?.[QUESTION_ACTION]?.value ?? "").trim();
    const refuse = (text: string) =>
      ack({ response_action: "errors", errors: { [QUESTION_BLOCK]: text } });
    if (!metadata.success) {
      deps.logger.warn({}, "a question modal came back without its target");
      await refuse("Something went wrong; please use the shortcut on the message again.");
      return;
    }
    if (question === "") {
      await refuse("Please write a question.");
      return;
    }
    // Checked again here, where the work starts (a modal can be submitted by anyone holding it).
    const author = authorOf(body);
    const team = await deps.installation.workspace(context);
    const refusal = await deps.admission(team).check(author);
    if (refusal !== undefined) {
      await refuse(REFUSAL_NOTES[refusal]);
      return;
    }
    const { channel, threadTs } = metadata.data;
    const user = body.user.id;
    const posting = deps.postQuestion({ team, channel, threadTs }, askedText(user, question));
    const early = await settleWithin(posting, deps.ackWithinMs ?? 2_000);
    if (early.state === "rejected") {
      deps.logger.warn({ err: String(early.error), channel }, "could not post a question");
      await refuse(explain(early.error));
      return;
    }
    await ack();
    if (early.state === "fulfilled") {
      await accept(early.value);
      return;
    }
    // The post is slow: the modal closes now and the question is taken once it is posted.
    posting.then(accept).catch((error: unknown) => {
      deps.logger.warn({ err: String(error), channel }, "could not post or take a question");
    });

    async function accept(ts: string): Promise<void> {
      // The question is the bot's own post: Slack will never deliver it again, so a question
      // that cannot be recorded is told to the person rather than left unanswered in silence.
      let result: string;
      try {
        result = await take(ts);
      } catch (error) {
        deps.logger.error({ err: String(error), channel, ts }, "could not record a question");
        deps.notes.tell({ team, channel, user, threadTs, text: NOT_RECORDED_NOTE });
        return;
      }
      deps.logger.debug({ result, channel, ts }, "question from the shortcut");
    }

    function take(ts: string) {
      return deps.bridge.accept({
        team,
        channel,
        isDirect: channel.startsWith("D"),
        threadTs,
        ts,
        user,
        authorTeam: author.team ?? team,
        text: question,
        files: [],
        mentioned: true,
      });
    }
  });
}

/** Who used the shortcut or submitted the modal: the person's own team and org. */
function authorOf(payload: {
  user: { id: string; team_id?: string };
  team?: { id: string; enterprise_id?: string } | null;
}): Author {
  return {
    user: payload.user.id,
    team: payload.user.team_id ?? payload.team?.id,
    enterprise: payload.team?.enterprise_id,
  };
}

/** The modal: the message quoted, a field for the question. */
export function questionModal(
  metadata: z.infer<typeof Metadata>,
  author: string | undefined,
  text: string,
) {
  const quoted = quote(text);
  return {
    type: "modal" as const,
    callback_id: ASK_VIEW_ID,
    private_metadata: JSON.stringify(metadata),
    title: { type: "plain_text" as const, text: "Ask the assistant" },
    submit: { type: "plain_text" as const, text: "Ask" },
    close: { type: "plain_text" as const, text: "Cancel" },
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: `${author ? `<@${author}>` : "The message"} wrote:\n${quoted}`,
        },
      },
      {
        type: "input",
        block_id: QUESTION_BLOCK,
        label: { type: "plain_text", text: "Your question" },
        element: {
          type: "plain_text_input",
          action_id: QUESTION_ACTION,
          multiline: true,
          max_length: QUESTION_MAX,
          placeholder: { type: "plain_text", text: "e.g. Summarize this thread" },
        },
      },
      {
        type: "context",
        elements: [
          {
            type: "mrkdwn",
            text: "Your question and the answer appear in this message's thread, for everyone there to see.",
          },
        ],
      },
    ],
  };
}

/** Slack markup quoted as is (it renders in the modal), cut short without a broken `<…>`. */
function quote(text: string): string {
  let body = text.trim() === "" ? "_(no text)_" : text.trim();
  if (body.length > QUOTE_MAX) {
    const cut = body.slice(0, QUOTE_MAX);
    // An item left open by the cut starts at the first `<` after the last `>` (found without
    // a pattern retried at every `<`, which would be quadratic).
    const open = cut.indexOf("<", cut.lastIndexOf(">") + 1);
    body = `${open === -1 ? cut : cut.slice(0, open)}…`;
  }
  return body
    .split("\n")
    .map((line) => `>${line}`)
    .join("\n");
}

/** The visible question in the thread; the person's words escaped as Slack requires. */
export function askedText(user: string, question: string): string {
  const escaped = question.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const lines = escaped.split("\n");
  return lines.length === 1
    ? `<@${user}> asked: ${escaped}`
    : `<@${user}> asked:\n${lines.map((l) => `>${l}`).join("\n")}`;
}

function explain(error: unknown): string {
  const failure = classifyCallFailure(error);
  if (failure.kind === "permanent") {
    if (["not_in_channel", "channel_not_found", "is_archived"].includes(failure.reason)) {
      return "I can't post in this conversation. Invite me to the channel first, then ask again.";
    }
    return `Slack refused to post your question (${failure.reason}). Please try again.`;
  }
  return "Slack is busy right now. Please try again in a moment.";
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
