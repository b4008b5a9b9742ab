import type { Immediate } from "../immediate.js";
import { type FeedbackRow as Row, toFeedback } from "../rows.js";
import type { Feedback, FeedbackStore, FeedbackValue } from "../stores.js";
import { type Db, truncateWal } from "./db.js";

/** Feedback in SQLite: the `feedback` table, one row per (turn, person). */
export class SqliteFeedbackStore implements Immediate<FeedbackStore> {
  private readonly upsertStmt;
  private readonly forTurnStmt;
  private readonly purgeStmt;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.upsertStmt = db.prepare<[string, string, FeedbackValue, number], Row>(
      `INSERT INTO feedback (turn_id, user, value, pressed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (turn_id, user) DO UPDATE SET value = excluded.value, pressed_at = excluded.pressed_at
       RETURNING *`,
    );
    this.forTurnStmt = db.prepare<[string], Row>(
      "SELECT * FROM feedback WHERE turn_id = ? ORDER BY pressed_at, user",
    );
    this.purgeStmt = db.prepare<[number, number]>(
      `DELETE FROM feedback WHERE rowid IN (
         SELECT rowid FROM feedback WHERE pressed_at < ? ORDER BY pressed_at LIMIT ?)`,
    );
  }

  record(turnId: string, user: string, value: FeedbackValue): Feedback {
    return toFeedback(this.upsertStmt.get(turnId, user, value, this.now()) as Row);
  }

  forTurn(turnId: string): Feedback[] {
    return this.forTurnStmt.all(turnId).map(toFeedback);
  }

  purge(before: number, limit: number): number {
    const deleted = this.purgeStmt.run(before, limit).changes;
    // As for turns' texts (turns.ts): the deleted rows are zeros in the file, gone from the -wal.
    if (deleted > 0) truncateWal(this.db);
    return deleted;
  }
}
