import type { IdentityMode } from "../config-people.js";
import type { CallFor, Credential, CredentialSource } from "../service/credential.js";
import type { RequestInfo } from "../service/errors.js";
import { type NotOwnerReason, PersonalTokenError, ThreadOwnerError } from "../service/errors.js";
import { senderFor } from "./thread-owner.js";
import type { TokenOwner } from "./token-cipher.js";
import type { TokenVault } from "./token-vault.js";

export interface IdentitiesOptions {
  mode: IdentityMode;
  vault: Pick<TokenVault, "tokenOf" | "unlink">;
  /** ASSISTANT_API_TOKEN. */
  sharedToken: string;
  /** A person's own token failed them in a request: none linked where required, or refused. */
  onUnusable?: (owner: TokenOwner, reason: "not_linked" | "refused") => void;
  /** A person asked in a conversation whose service thread they may not continue. */
  onNotOwner?: (asker: TokenOwner, reason: NotOwnerReason, threadOwner: string) => void;
}

/**
 * Who each service request is sent as (IDENTITY_MODE): the shared token, or the person's
 * own, linked in the workspace the request is for and read from the vault at each request, so
 * an unlink counts from the next one. In `personal` mode the shared token is never sent for a
 * person: without a token of their own the request is not sent at all. A request about a
 * service thread whose owner is known is sent as that owner or not at all (thread-owner.ts:
 * who may continue whose conversation).
 */
export class Identities implements CredentialSource {
  private readonly shared: Credential;

  constructor(private readonly options: IdentitiesOptions) {
    this.shared = { identity: "shared", token: options.sharedToken, personal: false };
  }

  resolve(caller: CallFor, request: RequestInfo): Credential {
    const { party, workspace, threadOwner } = caller;
    if (this.options.mode === "shared" || party === undefined) return this.shared;
    return this.personOf(party, workspace, request, threadOwner);
  }

  refused(credential: Credential): void {
    if (!credential.personal || credential.workspace === undefined) return;
    const owner = { team: credential.workspace, user: credential.identity };
    this.options.vault.unlink(owner);
    this.options.onUnusable?.(owner, "refused");
  }

  /** Whether this person must link a token before asking (personal mode, none linked). */
  mustLink(owner: TokenOwner): boolean {
    if (this.options.mode !== "personal") return false;
    return this.options.vault.tokenOf(owner) === undefined;
  }

  /**
   * `workspace` is the one the request is for; a request without one (a stop of a turn no
   * longer stored) finds no token of the person's.
   */
  private personOf(
    user: string,
    workspace: string | undefined,
    request: RequestInfo,
    threadOwner: string | undefined,
  ): Credential {
    const owner = workspace === undefined ? undefined : { team: workspace, user };
    const token = owner && this.options.vault.tokenOf(owner);
    const { mode } = this.options;
    const sender = senderFor({ mode, asker: user, linked: token !== undefined, threadOwner });
    switch (sender.kind) {
      case "own":
        return {
          identity: user,
          token: token as string,
          personal: true,
          workspace: workspace as string,
        };
      case "shared":
        return this.shared;
      case "link_first":
        if (owner) this.options.onUnusable?.(owner, "not_linked");
        throw new PersonalTokenError("not_linked", request);
      case "not_owner": {
        const threadOwnerId = threadOwner as string;
        if (owner) this.options.onNotOwner?.(owner, sender.reason, threadOwnerId);
        throw new ThreadOwnerError(sender.reason, threadOwnerId, request);
      }
    }
  }
}
