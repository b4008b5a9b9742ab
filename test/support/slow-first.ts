/**
 * Vitest's file order, with the files that spend longest waiting on real time first within
 * their tier. Vitest orders by the durations of the last run when it has them; a fresh clone
 * has none, and then it runs larger files first, which put the minute-long outage test near
 * the end, where it held the whole run up by most of its length. Longest first keeps the
 * three workers of the process-level tier busy until the end.
 */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Longest first, as measured on two cores (seconds, 2026-11-27). */
const SLOW_FIRST = [
  "test/faults/database-outage.test.ts", // 70: a minute without PostgreSQL
  "test/e2e/replicas.test.ts", // 58
  "test/e2e/thread-order-replicas.test.ts", // 36
  "test/e2e/bridge.test.ts", // 34
  "test/faults/crash-recovery-steps.test.ts", // 31
  "test/faults/database.test.ts", // 31
  "test/packaging/dockerfile.test.ts", // 26
];

export default class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (file: TestSpecification) => {
      const at = SLOW_FIRST.indexOf(relative(root, file.moduleId));
      return at < 0 ? SLOW_FIRST.length : at;
    };
    // Stable: within each tier (the base order keeps tiers apart), the rest keep their order.
    const tier = new Map(sorted.map((file, i) => [file, i]));
    return sorted.sort((a, b) => {
      const sameTier = a.project.name === b.project.name;
      if (!sameTier) return (tier.get(a) ?? 0) - (tier.get(b) ?? 0);
      return rank(a) - rank(b) || (tier.get(a) ?? 0) - (tier.get(b) ?? 0);
    });
  }
}
