import type { AllowanceScope, Allowances } from "../allowance.js";
import { gcraRules } from "../gcra.js";
import { localAllowances } from "../local-allowances.js";
import type { SlotWindows } from "../service/slot-window.js";
import { SLACK_MINUTE_MS, windowRules } from "../window.js";
import { PostgresBucket } from "./bucket.js";
import { BudgetDb, type BudgetDbOptions, type BudgetQuery } from "./budget-db.js";
import { PostgresSlotWindow, type SharedSlotOptions } from "./service-slots.js";
import { SlotTable } from "./slots.js";
import { PostgresWindow } from "./window.js";

export type SharedBudgetOptions = BudgetDbOptions & SharedSlotOptions;

/** The budgets replicas share, to hand to the Slack call scheduler and the service budget. */
export interface SharedBudgets {
  /** For `new CallScheduler({ allowances })`: each workspace's methods and lanes. */
  allowances: Allowances;
  /** For `new ServiceBudget({ windows })`: each token's run starts and requests. */
  slotWindows: SlotWindows;
  /** Deletes rows nobody counts any more (done by the takes themselves every 10 minutes). */
  sweep(now: number): void;
  /** Once no statement is on its way (BudgetDb.settled). */
  settled(): Promise<void>;
}

/**
 * Slack's and the service's budgets kept in PostgreSQL (schema migration 2), so that N
 * replicas on one database make no more calls than one would, and a 429 met by one holds
 * every one back until its Retry-After. Every statement is awaited: a take is made one round
 * trip ahead of its call (ahead.ts), so the event loop never waits for the database. While
 * the database does not answer, each replica spends its own copy of a Slack budget, so that
 * answers keep moving: replicas together may then go over a limit, and Slack's 429s, which
 * every replica heeds, hold them back. The schema is the stores' (openPostgresStores
 * migrates it first).
 *
 * Keys name the budget, never a secret: `slack:<team>:<method>` (a workspace's budget of a
 * method), `slack:<team>:<method>:<lane>` (a lane's own pace: a channel's posts),
 * `service:<user>:<kind>`, where the service budget's user is already a token's fingerprint
 * (service/credential.ts budgetUser).
 *
 * Every replica computes with its own clock: their clocks must agree (NTP keeps them within
 * milliseconds; a skew of s ms moves a budget's edges by s ms).
 */
export function sharedBudgets(
  query: BudgetQuery,
  options: SharedBudgetOptions = {},
): SharedBudgets {
  const budgets = new BudgetDb(query, options);
  const slots = new SlotTable(budgets);
  return {
    allowances: (scope, rules, changed) => {
      const key = slackKey(scope);
      const alone = localAllowances(scope, rules);
      const { perMinute, burst } = rules;
      return rules.window
        ? new PostgresWindow(
            budgets,
            slots,
            key,
            windowRules(perMinute, SLACK_MINUTE_MS),
            alone,
            changed,
          )
        : new PostgresBucket(budgets, key, gcraRules(perMinute, burst), alone, changed);
    },
    slotWindows: (rules, changed, clock) =>
      new PostgresSlotWindow(
        budgets,
        slots,
        `service:${rules.user}:${rules.kind}`,
        rules,
        clock,
        options,
        changed,
      ),
    sweep: (now) => budgets.sweep(now),
    settled: () => budgets.settled(),
  };
}

function slackKey({ team, method, lane }: AllowanceScope): string {
  return lane === undefined ? `slack:${team}:${method}` : `slack:${team}:${method}:${lane}`;
}
