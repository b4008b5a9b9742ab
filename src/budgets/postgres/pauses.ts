import type { BudgetDb } from "./budget-db.js";

/*
 * The 429 pauses of shared budgets: one row per key, read by every replica's takes. Statements
 * that read them name the key $1 and the instant $2.
 */

/** SQL: whether the key $1 is paused at $2. */
export const PAUSED = "EXISTS (SELECT 1 FROM budget_pauses WHERE key = $1 AND paused_until > $2)";

/** SQL: until when the key $1 is paused; -Infinity when it never was. */
export const PAUSED_UNTIL =
  "COALESCE((SELECT paused_until FROM budget_pauses WHERE key = $1), '-Infinity'::float8)";

/**
 * Nothing of `key` goes before `until`, in any replica; a shorter pause never cuts a longer one.
 * Not waited for (BudgetDb.post): a replica that misses a pause that could not be written
 * meets Slack's 429 itself.
 */
export function pause(db: BudgetDb, key: string, until: number): void {
  db.post(
    `INSERT INTO budget_pauses (key, paused_until) VALUES ($1, $2)
     ON CONFLICT (key) DO UPDATE
       SET paused_until = GREATEST(budget_pauses.paused_until, excluded.paused_until)`,
    [key, until],
  );
}
