import type { Immediate } from "../immediate.js";
import { type FeedbackRow as Row, toFeedback } from "../rows.js";
import type { Feedback, FeedbackStore, FeedbackValue } from "../stores.js";
import type { SyncPostgres } from "./sync-client.js";

/** Feedback in PostgreSQL: the `feedback` table, one row per (turn, person). */
export class PostgresFeedbackStore implements Immediate<FeedbackStore> {
  constructor(
    private readonly db: SyncPostgres,
    private readonly now: () => number = Date.now,
  ) {}

  record(turnId: string, user: string, value: FeedbackValue): Feedback {
    const row = this.db.first<Row>(
      `INSERT INTO feedback (turn_id, "user", value, pressed_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (turn_id, "user") DO UPDATE SET value = excluded.value,
         pressed_at = excluded.pressed_at
       RETURNING turn_id, "user", value, pressed_at`,
      [turnId, user, value, this.now()],
    );
    return toFeedback(row as Row);
  }

  forTurn(turnId: string): Feedback[] {
    return this.db
      .rows<Row>(
        `SELECT turn_id, "user", value, pressed_at FROM feedback WHERE turn_id = $1
         ORDER BY pressed_at, "user" COLLATE "C"`,
        [turnId],
      )
      .map(toFeedback);
  }

  purge(before: number, limit: number): number {
    // The condition again outside: a press another replica renewed meanwhile stays.
    return this.db.run(
      `DELETE FROM feedback WHERE pressed_at < $1 AND (turn_id, "user") IN (
         SELECT turn_id, "user" FROM feedback WHERE pressed_at < $1 ORDER BY pressed_at LIMIT $2)`,
      [before, limit],
    );
  }
}
