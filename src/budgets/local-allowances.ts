import type { Allowances } from "./allowance.js";
import { SlidingWindow } from "./sliding-window.js";
import { TokenBucket } from "./token-bucket.js";
import { SLACK_MINUTE_MS } from "./window.js";

/**
 * Budgets in this process's memory: the default, right for one process (SQLite). Replicas
 * sharing a database share their budgets there instead (budgets/postgres/).
 */
export const localAllowances: Allowances = (_scope, rules) =>
  rules.window
    ? new SlidingWindow(rules.perMinute, SLACK_MINUTE_MS)
    : new TokenBucket(rules.perMinute, rules.burst);
