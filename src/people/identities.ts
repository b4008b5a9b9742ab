import type { IdentityMode } from "../config-people.js";
import type {
  CallFor,
  Credential,
  CredentialSource,
  RefusalOutcome,
} from "../service/credential.js";
import type { RequestInfo } from "../service/errors.js";
import { type NotOwnerReason, PersonalTokenError, ThreadOwnerError } from "../service/errors.js";
import { senderFor } from "./thread-owner.js";
import type { TokenOwner } from "./token-cipher.js";
import type { TokenVault } from "./token-vault.js";

export interface IdentitiesOptions {
  mode: IdentityMode;
  vault: Pick<TokenVault, "tokenOf" | "unlinkIf">;
  /** ASSISTANT_API_TOKEN. */
  sharedToken: string;
  /**
   * Whether a 401 to this person's token is confirmed: asked again, the service refuses it
   * while it accepts the shared token (token-check.ts refusalConfirmed). Only then is the
   * token forgotten.
   */
  confirmRefusal: (owner: TokenOwner, token: string) => Promise<boolean>;
  /**
   * A person's own token failed them in a request: none linked where required, or refused
   * and forgotten (the refusal confirmed).
   */
  onUnusable?: (owner: TokenOwner, reason: "not_linked" | "refused") => void;
  /** The service refused a person's own token, and asked again did not confirm it: kept. */
  onRefusalUnconfirmed?: (owner: TokenOwner) => void;
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
  /** The confirmations under way, by person and token (`refused`). */
  private readonly confirming = new Map<string, Promise<RefusalOutcome>>();

  constructor(private readonly options: IdentitiesOptions) {
    this.shared = { identity: "shared", token: options.sharedToken, personal: false };
  }

  resolve(caller: CallFor, request: RequestInfo): Credential | Promise<Credential> {
    const { party, workspace, threadOwner } = caller;
    return this.known(caller) ?? this.personOf(party as string, workspace, request, threadOwner);
  }

  /** The shared token is known at once: no store read, no await. A person's is not. */
  known(caller: CallFor): Credential | undefined {
    return this.options.mode === "shared" || caller.party === undefined ? this.shared : undefined;
  }

  /**
   * A 401 to a person's token forgets it only once confirmed (`confirmRefusal`): a service
   * refusing every token for a while would otherwise unlink everyone who asked meanwhile.
   * Requests refused at the same time share one confirmation. A token linked anew while it
   * ran is not the one refused, and stays.
   */
  async refused(credential: Credential): Promise<RefusalOutcome> {
    if (!credential.personal || credential.workspace === undefined) return "kept";
    const owner = { team: credential.workspace, user: credential.identity };
    const key = `${owner.team}\u0000${owner.user}\u0000${credential.token}`;
    let confirming = this.confirming.get(key);
    if (confirming === undefined) {
      confirming = this.confirm(owner, credential.token).finally(() => {
        this.confirming.delete(key);
      });
      this.confirming.set(key, confirming);
    }
    return confirming;
  }

  private async confirm(owner: TokenOwner, token: string): Promise<RefusalOutcome> {
    let confirmed = false;
    try {
      confirmed = await this.options.confirmRefusal(owner, token);
    } catch {
      // Not confirmed: kept.
    }
    if (!confirmed) {
      this.options.onRefusalUnconfirmed?.(owner);
      return "kept";
    }
    // Forgotten, unless another token was linked meanwhile.
    if (await this.options.vault.unlinkIf(owner, token)) {
      this.options.onUnusable?.(owner, "refused");
    }
    return "forgotten";
  }

  /** Whether this person must link a token before asking (personal mode, none linked). */
  async mustLink(owner: TokenOwner): Promise<boolean> {
    if (this.options.mode !== "personal") return false;
    return (await this.options.vault.tokenOf(owner)) === undefined;
  }

  /**
   * `workspace` is the one the request is for; a request without one (a stop of a turn no
   * longer stored) finds no token of the person's.
   */
  private async personOf(
    user: string,
    workspace: string | undefined,
    request: RequestInfo,
    threadOwner: string | undefined,
  ): Promise<Credential> {
    const owner = workspace === undefined ? undefined : { team: workspace, user };
    const token = owner && (await this.options.vault.tokenOf(owner));
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
