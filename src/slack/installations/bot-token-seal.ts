import { openWith, sealWith } from "../../people/token-cipher.js";

/**
 * A workspace's bot token sealed at rest, as people's tokens are (people/token-cipher.ts:
 * AES-256-GCM under TOKEN_ENCRYPTION_KEY, a fresh nonce each time), bound to its
 * installation: a sealed row copied to another workspace or org does not open, nor does a
 * person's sealed token passed off as a bot's.
 */

/** Which installation the token is for: an org-wide one has no team (""), a plain workspace no org (""). */
export interface InstallationOwner {
  enterprise: string;
  team: string;
}

/** A sealed bot token that does not open under this key for this installation. */
export class BotTokenSealBroken extends Error {
  constructor() {
    // Says nothing of the bytes or the key: an error may reach a log line.
    super("an installation's bot token could not be opened with this key");
    this.name = "BotTokenSealBroken";
  }
}

function associatedData(owner: InstallationOwner): Buffer {
  // JSON, so ("E1", "T23") and ("E12", "T3") can never read the same.
  return Buffer.from(JSON.stringify(["bot-token", 1, owner.enterprise, owner.team]), "utf8");
}

export function sealBotToken(key: Buffer, owner: InstallationOwner, token: string): Buffer {
  return sealWith(key, associatedData(owner), token);
}

/** The bot token in clear; BotTokenSealBroken when the key, the owner or a byte is wrong. */
export function openBotToken(key: Buffer, owner: InstallationOwner, sealed: Buffer): string {
  const token = openWith(key, associatedData(owner), sealed);
  if (token === undefined) throw new BotTokenSealBroken();
  return token;
}
