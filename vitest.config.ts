import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // PostgreSQL first: its throwaway server must not live in the guard's private temp folder.
    globalSetup: ["test/support/postgres.ts", "test/temp-folder-guard.ts"],
    // Limits for a test that hangs, not for one that is slow: on two cores busy with the rest
    // of the suite, a test that starts child bots can take several times its quiet duration.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Most end-to-end tests wait on simulated answers and timers rather than the CPU: a
    // third worker on two cores shortens the run without starving the others.
    maxWorkers: 3,
  },
});
