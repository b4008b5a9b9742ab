import { randomUUID } from "node:crypto";

/** The link form's callback_id, and its token field (block_id and action_id). */
export const LINK_VIEW_ID = "link_token";
export const TOKEN_BLOCK = "token";
export const TOKEN_ACTION = "token";

/** What stands in a payload for a token that is not kept for anyone (not a submission). */
const REMOVED = "[removed]";

/** How long a withdrawn token waits for the form's listener; Slack wants an answer in 3 s. */
const HOLD_MS = 60_000;

type Fields = Record<string, unknown>;

const fields = (value: unknown): Fields | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Fields)
    : undefined;

/**
 * A person's token on its way in, taken out of the payload before anything can log it.
 *
 * At LOG_LEVEL=debug, Socket Mode's client writes every message of the socket whole to the
 * log, and Bolt can write whole bodies too; the log scrubber knows a person's token only once
 * it is linked, and a token the service refuses is never linked. So the token is withdrawn
 * where a payload enters the process (app.ts: the socket's messages before the Socket Mode
 * client reads them; HTTP bodies before Bolt's App sees them) and kept here, in memory, for
 * the link form's listener, which finds a handle in the field instead and claims the token.
 *
 * Withdrawn: the token field of any payload of the link form (a submission's is kept for its
 * listener; any other's is dropped), and anything a person typed after `/assistant link`,
 * which takes no words (a pasted token, most likely).
 */
export class LinkTokenIntake {
  readonly #held = new Map<string, string>();

  /** Takes the token out of a parsed payload, in place; whether anything was taken. */
  withdraw(payload: unknown): boolean {
    const body = fields(payload);
    if (body === undefined) return false;
    return this.#fromForm(body) || this.#fromCommand(body);
  }

  /**
   * The token a submission's field stands for, given once; undefined for a value that is no
   * handle of this intake (or whose token waited too long).
   */
  claim(handle: string): string | undefined {
    const token = this.#held.get(handle);
    this.#held.delete(handle);
    return token;
  }

  /** Tokens withdrawn and not claimed yet. */
  get holding(): number {
    return this.#held.size;
  }

  #fromForm(body: Fields): boolean {
    const view = fields(body.view);
    if (view?.callback_id !== LINK_VIEW_ID) return false;
    const input = fields(fields(fields(fields(view.state)?.values)?.[TOKEN_BLOCK])?.[TOKEN_ACTION]);
    if (input === undefined || typeof input.value !== "string" || input.value === "") return false;
    // Already a handle: the payload came this way before.
    if (this.#held.has(input.value)) return false;
    input.value = body.type === "view_submission" ? this.#hold(input.value) : REMOVED;
    return true;
  }

  #fromCommand(body: Fields): boolean {
    const { command, text } = body;
    if (typeof command !== "string" || typeof text !== "string") return false;
    const typed = /^(\s*link)\s+\S/i.exec(text);
    if (typed === null) return false;
    // The command still reads as `link` with words after it, and is answered as such.
    body.text = `${typed[1]} ${REMOVED}`;
    return true;
  }

  #hold(token: string): string {
    // A space: no token has one (the form refuses it), so a handle is never taken for one.
    const handle = `link-token ${randomUUID()}`;
    this.#held.set(handle, token);
    setTimeout(() => this.#held.delete(handle), HOLD_MS).unref();
    return handle;
  }
}
