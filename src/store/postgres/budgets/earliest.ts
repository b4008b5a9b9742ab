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
