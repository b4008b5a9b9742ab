import { toFeedback } from "../rows.js";
import type { Feedback, FeedbackStore, FeedbackValue } from "../stores.js";
import type { SqlDatabase } from "./dialect.js";
import { byteOrder } from "./order.js";

const COLUMNS = ["turn_id", "user", "value", "pressed_at"] as const;

/** Feedback in SQL (SQLite or PostgreSQL): the `feedback` table, one row per (turn, person). */
export class SqlFeedbackStore implements FeedbackStore {
  constructor(
    private readonly sqlDb: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  private get db() {
    return this.sqlDb.db;
  }

  async record(turnId: string, user: string, value: FeedbackValue): Promise<Feedback> {
    const row = await this.db
      .insertInto("feedback")
      .values({ turn_id: turnId, user, value, pressed_at: this.now() })
      .onConflict((conflict) =>
        conflict.columns(["turn_id", "user"]).doUpdateSet((eb) => ({
          value: eb.ref("excluded.value"),
          pressed_at: eb.ref("excluded.pressed_at"),
        })),
      )
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return toFeedback(row);
  }

  async forTurn(turnId: string): Promise<Feedback[]> {
    const rows = await this.db
      .selectFrom("feedback")
      .select(COLUMNS)
      .where("turn_id", "=", turnId)
      .execute();
    return rows
      .sort((a, b) => a.pressed_at - b.pressed_at || byteOrder(a.user, b.user))
      .map(toFeedback);
  }

  async purge(before: number, limit: number): Promise<number> {
    // The condition again outside: a press renewed meanwhile (another replica) stays.
    const result = await this.db
      .deleteFrom("feedback")
      .where("pressed_at", "<", before)
      .where((eb) =>
        eb(
          eb.refTuple("turn_id", "user"),
          "in",
          eb
            .selectFrom("feedback")
            .select(["turn_id", "user"])
            .where("pressed_at", "<", before)
            .orderBy("pressed_at")
            .limit(limit)
            .$asTuple("turn_id", "user"),
        ),
      )
      .executeTakeFirst();
    const purged = Number(result.numDeletedRows);
    // SQLite: the WAL keeps no page image of the presses deleted (sql/dialect.ts).
    if (purged > 0) await this.sqlDb.afterPurge();
    return purged;
  }
}
