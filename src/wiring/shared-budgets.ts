import type { Allowances } from "../budgets/allowance.js";
import { sharedBudgets } from "../budgets/postgres/shared-budgets.js";
import type { SlotWindows } from "../budgets/service/slot-window.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import { SyncPostgres } from "../store/postgres/sync-client.js";
import { errorText } from "./slack.js";

/**
 * How long a budget statement may wait for the database, ms: a budget asked while the server
 * does not answer holds the event loop this long once, then refuses calls for a second.
 */
const BUDGET_CALL_TIMEOUT_MS = 1_000;

export interface ReplicaBudgets {
  allowances: Allowances;
  slotWindows: SlotWindows;
  close(): void;
}

/**
 * Slack's and the service's budgets kept in PostgreSQL, so that replicas on one database share
 * them (budgets/postgres/), on a connection of their own with a short timeout: a slow
 * budget statement never waits behind a turn's, nor a turn's behind it.
 */
export function replicaBudgets(
  url: string,
  holder: string,
  metrics: Metrics,
  logger: Logger,
): ReplicaBudgets {
  const unreachable = (error: unknown) =>
    logger.warn({ err: errorText(error) }, "shared budgets unreachable");
  const db = new SyncPostgres(url, {
    callTimeoutMs: BUDGET_CALL_TIMEOUT_MS,
    onLateError: unreachable,
  });
  // The stores opened first and migrated the schema (bot.ts).
  const shared = sharedBudgets(db, {
    holder,
    onError: unreachable,
    onRefused: () => metrics.sharedBudgetWaits.inc(),
  });
  return {
    allowances: shared.allowances,
    slotWindows: shared.slotWindows,
    close: () => db.close(),
  };
}
