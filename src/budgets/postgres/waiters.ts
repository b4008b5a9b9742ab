import type { QueuePlace } from "../allowance.js";
import type { BudgetDb } from "./budget-db.js";

/*
 * Who waits for a shared bucket (`budget_waiters`): one row per key and replica, holding the
 * rank of the replica's longest-waiting call (Lane.rank) until `live_until`. A take is let
 * through only when no other replica's live row ranks lower, so each token goes to the call
 * that waited longest in any replica, as it does within one. A replica's row is written by its
 * own takes, taken or not, in the same statement: after a take it holds the rank of the
 * replica's next waiting call (Infinity when none). A replica whose waiting calls went away
 * without a take withdraws (its rank Infinity). A replica that dies waiting holds the others
 * back only until its row's `live_until`.
 *
 * The statements that use these fragments name the key $1 and the instant $2, and pass
 * waiterParams at $n, $n+1, $n+2 and $n+3; the take itself is the CTE `taken`.
 */

/** The parameters the fragments read, from $n on: holder, rank, next rank, live until. */
export function waiterParams(
  holder: string,
  place: QueuePlace | undefined,
  liveUntil: number,
): unknown[] {
  return [holder, place?.rank ?? null, place?.next ?? null, liveUntil];
}

/** SQL: no other replica's live waiter ranks before this take (always so without a place). */
export function firstInLine(n: number): string {
  return `($${n + 1}::float8 IS NULL OR NOT EXISTS (
    SELECT 1 FROM budget_waiters
    WHERE key = $1 AND holder <> $${n}::text AND rank < $${n + 1}::float8 AND live_until > $2::float8))`;
}

/** SQL, a CTE: this replica's row, with its next call's rank when `taken` took. */
export function queueUp(n: number): string {
  return `queued AS (
    INSERT INTO budget_waiters (key, holder, rank, live_until)
    SELECT $1, $${n}::text,
           CASE WHEN EXISTS (SELECT 1 FROM taken) THEN $${n + 2}::float8 ELSE $${n + 1}::float8 END,
           $${n + 3}::float8
    WHERE $${n + 1}::float8 IS NOT NULL
    ON CONFLICT (key, holder) DO UPDATE
      SET rank = excluded.rank, live_until = excluded.live_until)`;
}

/** `holder` has no call waiting for `key` now: its row holds nobody back (not waited for). */
export function withdrawWaiter(db: BudgetDb, key: string, holder: string): void {
  db.post("UPDATE budget_waiters SET rank = 'Infinity'::float8 WHERE key = $1 AND holder = $2", [
    key,
    holder,
  ]);
}
