import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * A person's access token sealed with AES-256-GCM: a fresh 12-byte nonce per sealing, and the
 * workspace and person as associated data, so a sealed row copied to another person (or
 * workspace) does not open. The layout is `version (1) | nonce (12) | tag (16) | ciphertext`.
 */

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Whose token it is: bound into the seal. */
export interface TokenOwner {
  team: string;
  user: string;
}

/** A sealed token that does not open under this key for this owner (or is not a seal). */
export class TokenSealBroken extends Error {
  constructor() {
    // Says nothing of the bytes or the key: an error may reach a log line.
    super("a linked token could not be opened with this key for this person");
    this.name = "TokenSealBroken";
  }
}

function associatedData(owner: TokenOwner): Buffer {
  // Length-prefixed, so ("T1", "U23") and ("T12", "U3") can never read the same.
  return Buffer.from(JSON.stringify(["linked-token", VERSION, owner.team, owner.user]), "utf8");
}

function checkKey(key: Buffer): void {
  if (key.length !== 32) throw new RangeError("the token key must be 32 bytes");
}

export function sealToken(key: Buffer, owner: TokenOwner, token: string): Buffer {
  return sealWith(key, associatedData(owner), token);
}

/** The token in clear; TokenSealBroken when the key, the owner or a byte is wrong. */
export function openToken(key: Buffer, owner: TokenOwner, sealed: Buffer): string {
  const token = openWith(key, associatedData(owner), sealed);
  if (token === undefined) throw new TokenSealBroken();
  return token;
}

/**
 * Seals `text` under `key`, bound to `associated` (who or what it belongs to): the layout
 * above. Sibling seals (a workspace's bot token) bind their own associated data.
 */
export function sealWith(key: Buffer, associated: Buffer, text: string): Buffer {
  checkKey(key);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(associated);
  const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return Buffer.concat([Buffer.of(VERSION), nonce, cipher.getAuthTag(), body]);
}

/** The text in clear; undefined when the key, the associated data or a byte is wrong. */
export function openWith(key: Buffer, associated: Buffer, sealed: Buffer): string | undefined {
  checkKey(key);
  if (sealed.length <= 1 + NONCE_BYTES + TAG_BYTES || sealed[0] !== VERSION) return undefined;
  const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
  const tag = sealed.subarray(1 + NONCE_BYTES, 1 + NONCE_BYTES + TAG_BYTES);
  const body = sealed.subarray(1 + NONCE_BYTES + TAG_BYTES);
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(associated);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
