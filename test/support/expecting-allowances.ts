import type { Allowances } from "../../src/budgets/allowance.js";
import { localAllowances } from "../../src/budgets/local-allowances.js";

/**
 * Budgets in memory, as the scheduler keeps them by default, that write down in `told` each
 * call they are told to expect (Allowance.expect): `method`, or `method:lane` for a lane's pace.
 */
export function expectingAllowances(told: string[]): Allowances {
  return (scope, rules) =>
    Object.assign(localAllowances(scope, rules), {
      expect: () => {
        told.push(scope.lane === undefined ? scope.method : `${scope.method}:${scope.lane}`);
      },
    });
}
