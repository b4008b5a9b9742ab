import { CompiledQuery } from "kysely";
import type { Allowances } from "../budgets/allowance.js";
import { sharedBudgets } from "../budgets/postgres/shared-budgets.js";
import type { SlotWindows } from "../budgets/service/slot-window.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";
import { postgresDatabase } from "../store/sql/postgres-pool.js";
import { errorText } from "./slack.js";

/**
 * How long a budget statement may take, ms: past it the budgets refuse calls for a second
 * (budget-db.ts) rather than let answers wait on a database that does not answer.
 */
const BUDGET_CALL_TIMEOUT_MS = 1_000;

/** After a budget statement failed, the database is asked again this much later, ms. */
const STALLED_RETRY_MS = 3_000;

export interface ReplicaBudgets {
  allowances: Allowances;
  slotWindows: SlotWindows;
  close(): Promise<void>;
}

/**
 * Slack's and the service's budgets kept in PostgreSQL, so that replicas on one database share
 * them (budgets/postgres/), on a small pool of their own with short time limits: a slow
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
  // The stores opened first and migrated the schema (bot.ts).
  const database = postgresDatabase(url, {
    // Six were tried (2026-11-28): the takes queued less, but more of them were made, and the
    // first words came later in both runs of the bench (docs/performance-history.md).
    max: 2,
    warm: 2,
    callTimeoutMs: BUDGET_CALL_TIMEOUT_MS,
    statementTimeoutMs: BUDGET_CALL_TIMEOUT_MS,
    connectTimeoutMs: BUDGET_CALL_TIMEOUT_MS,
    onIdleError: unreachable,
  });
  const shared = sharedBudgets(
    async (text, params) =>
      (await database.db.executeQuery(CompiledQuery.raw(text, [...params]))).rows as Record<
        string,
        unknown
      >[],
    {
      holder,
      onError: unreachable,
      onRefused: () => metrics.sharedBudgetWaits.inc(),
      // A statement failed: each replica goes by its own copy of Slack's budgets this long
      // before it asks the database again (budgets/postgres/ahead.ts: stalled).
      retryMs: STALLED_RETRY_MS,
    },
  );
  return {
    allowances: shared.allowances,
    slotWindows: shared.slotWindows,
    close: async () => {
      await shared.settled();
      await database.close();
    },
  };
}
