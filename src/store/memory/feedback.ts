import type { Immediate } from "../immediate.js";
import type { Feedback, FeedbackStore, FeedbackValue } from "../stores.js";

/** Feedback in a Map, one entry per (turn, person): the core's tests use it in place of SQLite. */
export class MemoryFeedbackStore implements Immediate<FeedbackStore> {
  private readonly rows = new Map<string, Feedback>();

  constructor(private readonly now: () => number = Date.now) {}

  record(turnId: string, user: string, value: FeedbackValue): Feedback {
    const key = `${turnId}\u0000${user}`;
    const row: Feedback = { turnId, user, value, at: this.now() };
    // Re-inserted, so the Map's order stays the order of the latest presses.
    this.rows.delete(key);
    this.rows.set(key, row);
    return { ...row };
  }

  forTurn(turnId: string): Feedback[] {
    return [...this.rows.values()]
      .filter((row) => row.turnId === turnId)
      .sort(byTime)
      .map((row) => ({ ...row }));
  }

  purge(before: number, limit: number): number {
    const due = [...this.rows]
      .filter(([, row]) => row.at < before)
      .sort(([, a], [, b]) => byTime(a, b))
      .slice(0, limit);
    for (const [key] of due) this.rows.delete(key);
    return due.length;
  }
}

const byTime = (a: Feedback, b: Feedback) =>
  a.at - b.at || (a.user < b.user ? -1 : a.user > b.user ? 1 : 0);
