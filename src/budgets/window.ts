/**
 * The arithmetic of a sliding window (at most `limit` takes in any `windowMs`, with no pace
 * inside it), as a pure function of the takes: the in-memory window (budgets/sliding-window.ts)
 * and the one replicas share in PostgreSQL (budgets/postgres/window.ts) both use it.
 */
export interface WindowRules {
  /** Takes allowed in any window (>= 1). */
  limit: number;
  /** The window's length, ms. */
  windowMs: number;
}

/**
 * The window a Slack method's minute is counted over, ms: a minute and a second. Slack counts
 * a call when it arrives and the bot when it sends it; calls sent a minute apart may arrive
 * less than a minute apart, so the bot's minute is a little longer than Slack's.
 */
export const SLACK_MINUTE_MS = 61_000;

export function windowRules(limit: number, windowMs = 60_000): WindowRules {
  if (!(limit >= 1)) throw new RangeError(`limit must be >= 1, got ${limit}`);
  return { limit, windowMs };
}

/** Whether a take made at `at` still counts at `now`. */
export function inWindow(at: number, now: number, rules: WindowRules): boolean {
  return at > now - rules.windowMs;
}

/**
 * The earliest instant at which a take is allowed, once `ahead` takes have gone before it.
 * `takes` are the instants of the takes still in the window at `now`, oldest first. Takes
 * beyond this window's are placed in later windows, a window apart.
 */
export function windowReadyAt(
  takes: readonly number[],
  now: number,
  ahead: number,
  rules: WindowRules,
): number {
  const over = takes.length + ahead - rules.limit;
  if (over < 0) return now;
  const windows = Math.floor(over / rules.limit);
  const leaving = takes[over % rules.limit] ?? now;
  return Math.max(now, leaving + (windows + 1) * rules.windowMs);
}
