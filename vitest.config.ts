import { defineConfig } from "vitest/config";
import SlowFirst from "./test/support/slow-first.js";

/**
 * Tests that run whole bots: the bot wired as it runs (Bolt's receivers, signed requests, a
 * real database) against the fake Slack and the simulator over HTTP, child processes, kills,
 * replicas, the sandbox's terminal, the image's build file.
 */
const PROCESS_LEVEL = [
  "test/e2e/**/*.test.ts",
  "test/faults/**/*.test.ts",
  "test/sandbox/cli.test.ts",
  "test/sandbox/terminal-chat.test.ts",
  "test/tools/simulator/cli.test.ts",
  "test/packaging/dockerfile.test.ts",
  "test/packaging/build.test.ts",
];

/** What both tiers share. */
const COMMON = {
  // Limits for a test that hangs, not for one that is slow: on two cores busy with the rest
  // of the suite, a test that starts child bots can take several times its quiet duration.
  testTimeout: 60_000,
  hookTimeout: 30_000,
  pool: "forks",
  // Each worker loads the modules once for all its files, not once per file: imports took
  // about 135 s of the run's workers, 35 s after (the whole run from 325 s to about 265 s).
  // No test keeps state between files: each closes what it opened and restores its spies.
  isolate: false,
} as const;

export default defineConfig({
  test: {
    // Once for the whole run (the tiers do not extend it, so it does not run again for each).
    // PostgreSQL first: its throwaway server must not live in the guard's private temp folder.
    globalSetup: ["test/support/postgres.ts", "test/temp-folder-guard.ts"],
    // The files that wait longest on real time first, on a fresh clone too.
    sequence: { sequencer: SlowFirst },
    // Two tiers, both in `npm test`, one after the other: the parts on their own (stores, the
    // core, strategies on an injected clock; seconds), then whole bots, which then have the
    // machine to themselves. `npx vitest run --project in-process` runs the first alone.
    projects: [
      {
        test: {
          ...COMMON,
          name: "in-process",
          include: ["test/**/*.test.ts"],
          exclude: PROCESS_LEVEL,
          sequence: { groupOrder: 0 },
          // CPU-bound: one worker a core.
          maxWorkers: 2,
        },
      },
      {
        test: {
          ...COMMON,
          name: "process-level",
          include: PROCESS_LEVEL,
          sequence: { groupOrder: 1 },
          // Most of these wait on simulated answers and timers rather than the CPU: a third
          // worker on two cores shortens the run without starving the others.
          maxWorkers: 3,
        },
      },
    ],
  },
});
