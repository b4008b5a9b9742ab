import {
  BotTokenSealBroken,
  openBotToken,
  sealBotToken,
} from "../slack/installations/bot-token-seal.js";
import type { InstallationStore, LinkedTokenStore, Stores } from "../store/stores.js";
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
      `${broken} sealed token${broken === 1 ? "" : "s"} (linked, or an installation's bot token) open${broken === 1 ? "s" : ""} under neither the current nor the new key, so nothing was changed; check TOKEN_ENCRYPTION_KEY`,
    );
    this.name = "RotationRefused";
  }
}

/** What a rotation would change: the new seals, and the counts. */
interface Plan<Row> {
  resealed: Row[];
  already: number;
  broken: number;
}

/**
 * Seals every token of `rows` again under `newKey`, leaving those already under it. `open`
 * gives a row's token in clear under a key (undefined: it does not open); `seal` the row
 * with its token sealed under the new key.
 */
function plan<Row>(
  rows: readonly Row[],
  keys: { currentKey: Buffer; newKey: Buffer },
  open: (key: Buffer, row: Row) => string | undefined,
  seal: (key: Buffer, row: Row, token: string) => Row,
): Plan<Row> {
  const resealed: Row[] = [];
  let already = 0;
  let broken = 0;
  for (const row of rows) {
    if (open(keys.newKey, row) !== undefined) {
      already++;
      continue;
    }
    const clear = open(keys.currentKey, row);
    if (clear === undefined) broken++;
    else resealed.push(seal(keys.newKey, row, clear));
  }
  return { resealed, already, broken };
}

type LinkedRow = { team: string; user: string; sealed: Buffer };

async function linkedPlan(store: LinkedTokenStore, keys: { currentKey: Buffer; newKey: Buffer }) {
  return plan<LinkedRow>(
    (await store.all()).map(({ team, user, sealed }) => ({ team, user, sealed })),
    keys,
    (key, row) => quietly(() => openToken(key, row, row.sealed), TokenSealBroken),
    (key, row, token) => ({ ...row, sealed: sealToken(key, row, token) }),
  );
}

type BotRow = { enterprise: string; team: string; sealedBotToken: Buffer };

async function botPlan(store: InstallationStore, keys: { currentKey: Buffer; newKey: Buffer }) {
  return plan<BotRow>(
    (await store.list()).map(({ enterprise, team, sealedBotToken }) => ({
      enterprise,
      team,
      sealedBotToken,
    })),
    keys,
    (key, row) => quietly(() => openBotToken(key, row, row.sealedBotToken), BotTokenSealBroken),
    (key, row, token) => ({ ...row, sealedBotToken: sealBotToken(key, row, token) }),
  );
}

/**
 * Seals every linked token again under `newKey`, in one transaction: all tokens move or
 * none does. Tokens already under the new key are left as they are, so a rotation may be
 * run again safely.
 */
export async function rotateTokenKey(
  store: LinkedTokenStore,
  currentKey: Buffer,
  newKey: Buffer,
): Promise<RotationResult> {
  const linked = await linkedPlan(store, { currentKey, newKey });
  if (linked.broken > 0) throw new RotationRefused(linked.broken);
  await store.reseal(linked.resealed);
  return { rotated: linked.resealed.length, already: linked.already };
}

/**
 * The whole rotation: people's linked tokens and the installations' bot tokens (several
 * workspaces), read, checked and sealed again in one transaction with the database to
 * itself (`Stores.exclusively`): every token moves or none does, a failure midway included.
 * A token under neither key refuses the rotation before anything is written; a bot running
 * on the database refuses it (DatabaseInUse) before anything is read.
 */
export function rotateAllKeys(
  stores: Pick<Stores, "exclusively">,
  currentKey: Buffer,
  newKey: Buffer,
): Promise<{ linked: RotationResult; bots: RotationResult }> {
  const keys = { currentKey, newKey };
  return stores.exclusively(async ({ linkedTokens, installations }) => {
    const linked = await linkedPlan(linkedTokens, keys);
    const bots = await botPlan(installations, keys);
    if (linked.broken + bots.broken > 0) throw new RotationRefused(linked.broken + bots.broken);
    await linkedTokens.reseal(linked.resealed);
    await installations.reseal(bots.resealed);
    return {
      linked: { rotated: linked.resealed.length, already: linked.already },
      bots: { rotated: bots.resealed.length, already: bots.already },
    };
  });
}

/** The value, or undefined when it throws `Broken` (a seal that does not open). */
function quietly(open: () => string, Broken: new () => Error): string | undefined {
  try {
    return open();
  } catch (error) {
    if (error instanceof Broken) return undefined;
    throw error;
  }
}
