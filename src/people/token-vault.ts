import type { LinkedTokenStore } from "../store/stores.js";
import { openToken, sealToken, type TokenOwner, TokenSealBroken } from "./token-cipher.js";

export interface TokenVaultOptions {
  /** TOKEN_ENCRYPTION_KEY; undefined: linking is off and no token is ever read. */
  key: Buffer | undefined;
  store: LinkedTokenStore;
  /** Told each token in clear the moment the vault holds it, so the log scrubber masks it. */
  onSecret?: (token: string) => void;
  /** A sealed token that does not open (the key changed without a rotation): for the log. */
  onBroken?: (owner: TokenOwner) => void;
}

/** Linking asked for while no TOKEN_ENCRYPTION_KEY is set. */
export class LinkingOff extends Error {
  constructor() {
    super("linking is off: TOKEN_ENCRYPTION_KEY is not set");
    this.name = "LinkingOff";
  }
}

/**
 * People's own access tokens, sealed at rest (token-cipher.ts) and opened only when a request
 * is about to carry one. Nothing is cached in clear: each request reads the store, so an
 * unlink takes effect at the very next request.
 */
export class TokenVault {
  constructor(private readonly options: TokenVaultOptions) {}

  /** Whether people may link tokens (a key is set). */
  get enabled(): boolean {
    return this.options.key !== undefined;
  }

  async link(owner: TokenOwner, token: string): Promise<void> {
    const { key, store } = this.options;
    if (key === undefined) throw new LinkingOff();
    this.options.onSecret?.(token);
    await store.put(owner.team, owner.user, sealToken(key, owner, token));
  }

  /** Forgets the person's token; whether there was one. */
  unlink(owner: TokenOwner): Promise<boolean> {
    return this.options.store.remove(owner.team, owner.user);
  }

  /**
   * Forgets the person's token if it is still `token` (not one linked since); whether it
   * was forgotten. A link in the instant between the read and the delete is forgotten with
   * it: the person links again, and a refused token is never kept.
   */
  async unlinkIf(owner: TokenOwner, token: string): Promise<boolean> {
    if ((await this.tokenOf(owner)) !== token) return false;
    return this.unlink(owner);
  }

  /** The person's token in clear, read now; undefined when none opens. */
  async tokenOf(owner: TokenOwner): Promise<string | undefined> {
    const { key, store } = this.options;
    if (key === undefined) return undefined;
    const row = await store.get(owner.team, owner.user);
    if (row === undefined) return undefined;
    try {
      const token = openToken(key, owner, row.sealed);
      this.options.onSecret?.(token);
      return token;
    } catch (error) {
      if (!(error instanceof TokenSealBroken)) throw error;
      this.options.onBroken?.(owner);
      return undefined;
    }
  }

  /** Whether the person has a token that opens. */
  async isLinked(owner: TokenOwner): Promise<boolean> {
    return (await this.tokenOf(owner)) !== undefined;
  }
}
