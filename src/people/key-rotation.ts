import type { LinkedTokenStore } from "../store/stores.js";
import { openToken, sealToken, TokenSealBroken } from "./token-cipher.js";

export interface RotationResult {
  /** Tokens sealed again under the new key. */
  rotated: number;
  /** Tokens already under the new key (a rotation run again after it was interrupted). */
  already: number;
}

/** Some tokens open under neither key: nothing was changed. */
export class RotationRefused extends Error {
  constructor(readonly broken: number) {
    super(
      `${broken} linked token${broken === 1 ? "" : "s"} open${broken === 1 ? "s" : ""} under neither the current nor the new key, so nothing was changed; check TOKEN_ENCRYPTION_KEY`,
    );
    this.name = "RotationRefused";
  }
}

/**
 * Seals every linked token again under `newKey`, in one transaction: all tokens move or
 * none does. Tokens already under the new key are left as they are, so a rotation may be
 * run again safely.
 */
export function rotateTokenKey(
  store: LinkedTokenStore,
  currentKey: Buffer,
  newKey: Buffer,
): RotationResult {
  const resealed: { team: string; user: string; sealed: Buffer }[] = [];
  let already = 0;
  let broken = 0;
  for (const row of store.all()) {
    const owner = { team: row.team, user: row.user };
    const token = tryOpen(newKey, owner, row.sealed);
    if (token !== undefined) {
      already++;
      continue;
    }
    const clear = tryOpen(currentKey, owner, row.sealed);
    if (clear === undefined) broken++;
    else resealed.push({ ...owner, sealed: sealToken(newKey, owner, clear) });
  }
  if (broken > 0) throw new RotationRefused(broken);
  store.reseal(resealed);
  return { rotated: resealed.length, already };
}

function tryOpen(
  key: Buffer,
  owner: { team: string; user: string },
  sealed: Buffer,
): string | undefined {
  try {
    return openToken(key, owner, sealed);
  } catch (error) {
    if (error instanceof TokenSealBroken) return undefined;
    throw error;
  }
}
