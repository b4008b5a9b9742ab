/**
 * The earliest instant a shared budget may allow its next take, as this replica last learnt it
 * from the database. Other replicas' takes and 429 pauses only ever move that instant later,
 * so until it comes the database need not be asked: the scheduler wakes on every new piece of
 * every answer, and a budget it finds spent is answered here, without a round trip.
 */
export class EarliestTake {
  private at = Number.NEGATIVE_INFINITY;

  /** The instant learnt, while it is still ahead of `now`; undefined: ask the database. */
  ahead(now: number): number | undefined {
    return now < this.at ? this.at : undefined;
  }

  /** Keeps `at` when it is later than what was known; returns it. */
  learnt(at: number): number {
    this.at = Math.max(this.at, at);
    return at;
  }
}

/**
 * How long what a budget read from the database answers its readyAt, ms. An answer that says
 * "ready" may be stale by then (another replica took the token): the take itself is decided by
 * the database, and a refused one reads again. The scheduler asks on every wake (every new
 * piece of every answer); a read per budget per SEEN_MS bounds what that costs.
 */
const SEEN_MS = 25;

/** Whether a reading made at `readAt` still answers at `now`. */
export function fresh(readAt: number, now: number): boolean {
  return now >= readAt && now - readAt < SEEN_MS;
}
