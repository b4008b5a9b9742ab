import type { IdentityMode } from "../config-people.js";
import type { Credential, CredentialSource } from "../service/credential.js";
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
  /** The installation's workspace: it keys every linked token. */
  workspace: () => Promise<string>;
  /** A person's own token failed them in a request: none linked where required, or refused. */
  onUnusable?: (owner: TokenOwner, reason: "not_linked" | "refused") => void;
  /** A person asked in a conversation whose service thread they may not continue. */
  onNotOwner?: (asker: TokenOwner, reason: NotOwnerReason, threadOwner: string) => void;
}

/**
 * Who each service request is sent as (IDENTITY_MODE): the shared token, or the person's
 * own, read from the vault at each request so an unlink counts from the next one. In
 * `personal` mode the shared token is never sent for a person: without a token of their own
 * the request is not sent at all. A request about a service thread whose owner is known is
 * sent as that owner or not at all (thread-owner.ts: who may continue whose conversation).
 */
export class Identities implements CredentialSource {
  private readonly shared: Credential;
  /** The workspace, once known (a refusal is told synchronously). */
  private team: string | undefined;

  constructor(private readonly options: IdentitiesOptions) {
    this.shared = { identity: "shared", token: options.sharedToken, personal: false };
  }

  resolve(
    party: string | undefined,
    request: RequestInfo,
    threadOwner?: string,
  ): Credential | Promise<Credential> {
    if (this.options.mode === "shared" || party === undefined) return this.shared;
    return this.personOf(party, request, threadOwner);
  }

  refused(credential: Credential): void {
    if (!credential.personal || this.team === undefined) return;
    const owner = { team: this.team, user: credential.identity };
    this.options.vault.unlink(owner);
    this.options.onUnusable?.(owner, "refused");
  }

  /** Whether this person must link a token before asking (personal mode, none linked). */
  async mustLink(user: string): Promise<boolean> {
    if (this.options.mode !== "personal") return false;
    const team = await this.workspaceId();
    return this.options.vault.tokenOf({ team, user }) === undefined;
  }

  private async personOf(
    user: string,
    request: RequestInfo,
    threadOwner: string | undefined,
  ): Promise<Credential> {
    const team = await this.workspaceId();
    const token = this.options.vault.tokenOf({ team, user });
    const { mode } = this.options;
    const sender = senderFor({ mode, asker: user, linked: token !== undefined, threadOwner });
    switch (sender.kind) {
      case "own":
        return { identity: user, token: token as string, personal: true };
      case "shared":
        return this.shared;
      case "link_first":
        this.options.onUnusable?.({ team, user }, "not_linked");
        throw new PersonalTokenError("not_linked", request);
      case "not_owner": {
        const owner = threadOwner as string;
        this.options.onNotOwner?.({ team, user }, sender.reason, owner);
        throw new ThreadOwnerError(sender.reason, owner, request);
      }
    }
  }

  private async workspaceId(): Promise<string> {
    this.team ??= await this.options.workspace();
    return this.team;
  }
}
