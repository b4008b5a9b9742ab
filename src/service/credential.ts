import { createHash } from "node:crypto";
import type { RequestInfo } from "./errors.js";

/**
 * Whose token a request carries. `identity` names it in logs ("shared", or the Slack person
 * whose own token it is); the token itself is never logged, nor kept beyond the request.
 */
export interface Credential {
  identity: string;
  token: string;
  /** A person's own token (not the shared one): a 401 means that person's link is dead. */
  personal: boolean;
  /** Where a person's own token is linked: their workspace. */
  workspace?: string;
}

/** Whom a call is made for (http-request.ts CallOptions): what picks its credential. */
export interface CallFor {
  /** A Slack person; undefined: the bot's own calls. */
  party?: string;
  /** The person's workspace (installation): a person's own token is linked in one. */
  workspace?: string;
  /** Whose service thread the call is about, when known. */
  threadOwner?: string;
}

/**
 * Where a call's credential comes from. It is asked before each attempt, and again once the
 * attempt's turn in the budget has come, so a token unlinked while the call waited is not sent.
 */
export interface CredentialSource {
  /**
   * The credential for a call made for `caller`, read now. Throws a PersonalTokenError when
   * the person must use their own token and has none, and a ThreadOwnerError when the thread
   * is another identity's: then nothing is sent.
   */
  resolve(caller: CallFor, request: RequestInfo): Credential | Promise<Credential>;
  /**
   * The credential `resolve` would give `caller`, when it is known at once without reading
   * anything or telling anyone (the shared token); undefined otherwise. Default: never known.
   */
  known?(caller: CallFor): Credential | undefined;
  /**
   * The service answered 401 to this personal credential: whether the person's token is now
   * forgotten (the refusal was confirmed) or kept (it was not: a passing fault, or the
   * service refusing everyone). The caller's error says which (PersonalTokenError).
   */
  refused?(credential: Credential): RefusalOutcome | Promise<RefusalOutcome>;
}

/** What became of a person's token the service refused (CredentialSource.refused). */
export type RefusalOutcome = "forgotten" | "kept";

/** Every call carries one token: the bot's shared one. */
export function sharedCredential(token: string): CredentialSource {
  const credential: Credential = { identity: "shared", token, personal: false };
  return { resolve: () => credential, known: () => credential };
}

/**
 * The budget's user of a token: a fingerprint, so snapshots, metrics and logs never carry it.
 * Each token is its own user at the service, so each has its own budget.
 */
export function budgetUser(token: string): string {
  return `token:${createHash("sha256").update(token).digest("hex").slice(0, 12)}`;
}
