import type { IdentityMode } from "../config-people.js";
import type { NotOwnerReason } from "../service/errors.js";

/**
 * Who may continue whose conversation. The service keeps a thread (its messages, its runs)
 * for the token that created it and answers any other token 404, so a conversation's
 * requests are sent as the identity that opened its service thread, or not at all.
 */

/** What a person's request about a conversation is sent as. */
export type Sender =
  /** The bot's shared token (ASSISTANT_API_TOKEN). */
  | { kind: "shared" }
  /** The person's own token, which is linked. */
  | { kind: "own" }
  /** `personal` mode, no token linked: the person is told how to link (the existing path). */
  | { kind: "link_first" }
  /** Nothing is sent: the thread is another identity's (or theirs, but no longer linked). */
  | { kind: "not_owner"; reason: NotOwnerReason };

export interface SenderQuestion {
  mode: IdentityMode;
  /** The Slack person asking. */
  asker: string;
  /** Whether the asker has a token of their own linked, now. */
  linked: boolean;
  /**
   * Who opened the conversation's service thread: a person's Slack id, or "shared".
   * Undefined: no thread yet (it is opened as the asker), or one opened before owners were
   * recorded (sent as the asker, as it always was).
   */
  threadOwner: string | undefined;
}

/**
 * The rule, as a pure function:
 * - `shared` mode: everything with the shared token, whoever opened the thread.
 * - a new conversation (or an owner not recorded): the asker's own token when linked, else
 *   the shared one (`either`) or none (`personal`: link first).
 * - a thread opened with the shared token: anyone allowed to use the shared token (`either`)
 *   continues it with it, linked or not; in `personal` mode nobody can.
 * - the asker's own thread: their own token; unlinked, `personal` asks them to link again and
 *   `either` cannot continue it with another token.
 * - anyone else's thread: nothing is sent.
 */
export function senderFor(question: SenderQuestion): Sender {
  const { mode, asker, linked, threadOwner } = question;
  if (mode === "shared") return { kind: "shared" };
  if (threadOwner === undefined) {
    if (linked) return { kind: "own" };
    return mode === "either" ? { kind: "shared" } : { kind: "link_first" };
  }
  if (threadOwner === SHARED) {
    return mode === "either" ? { kind: "shared" } : { kind: "not_owner", reason: "shared_unused" };
  }
  if (threadOwner === asker) {
    if (linked) return { kind: "own" };
    return mode === "personal"
      ? { kind: "link_first" }
      : { kind: "not_owner", reason: "owner_unlinked" };
  }
  return { kind: "not_owner", reason: "another_person" };
}

/** The owner recorded for a thread opened with the shared token (Credential.identity). */
export const SHARED = "shared";

/**
 * The private note for a person whose message was not passed on because the conversation's
 * service thread is not theirs to continue: whose it is, and where to ask instead.
 */
export function notOwnerNote(reason: NotOwnerReason, threadOwner: string): string {
  switch (reason) {
    case "another_person":
      return `Only <@${threadOwner}> can continue this conversation: it was started with their own access to the assistant service, which keeps it for them alone. To ask the assistant yourself, start a new thread (mention me in a channel) or send me a direct message.`;
    case "owner_unlinked":
      return "This conversation was started with your own access token, which is no longer linked, and the assistant service keeps it for that token alone. Link it again with `/assistant link` to continue here, or start a new thread (or send me a direct message) to ask without it.";
    case "shared_unused":
      return "This conversation was started with the bot's shared access to the assistant service, which is no longer used here, so it cannot be continued. To ask with your own access token, start a new thread (mention me in a channel) or send me a direct message.";
  }
}
