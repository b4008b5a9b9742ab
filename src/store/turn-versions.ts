import type { Turn } from "./turn.js";

/** A turn as this process last read or wrote it, with the row's `updated_at` then. */
export interface TurnVersion {
  turn: Turn;
  updatedAt: number;
}

/** At most this many turns are remembered; the one written longest ago is forgotten first. */
const KEPT = 1_000;

/**
 * The last version of each turn this process wrote, so that its next transition can be
 * written in one round trip, on the condition that the row is still that version. A turn is
 * written by the replica holding its conversation, so the condition almost always holds;
 * when it does not (another replica wrote, or the turn was forgotten), the row is read first,
 * as without it. A finished turn is never written again and is forgotten.
 */
export class TurnVersions {
  private readonly versions = new Map<string, TurnVersion>();

  get(id: string): TurnVersion | undefined {
    return this.versions.get(id);
  }

  keep(version: TurnVersion): void {
    const { id } = version.turn;
    this.versions.delete(id);
    if (version.turn.state === "finished") return;
    this.versions.set(id, version);
    if (this.versions.size > KEPT) {
      const oldest = this.versions.keys().next().value as string;
      this.versions.delete(oldest);
    }
  }

  forget(id: string): void {
    this.versions.delete(id);
  }
}
