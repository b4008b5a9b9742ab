/**
 * Vitest global setup: the whole run gets a fresh temp folder, and the run fails if a test
 * leaves anything in it. Workers and the child processes they spawn inherit TMPDIR, and
 * `os.tmpdir()` reads it, so every `mkdtempSync(join(tmpdir(), …))` lands here.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * What tools (not tests) keep in the temp folder on purpose: tsx's compile cache and IPC
 * folder (`tsx-<uid>`), written by the child processes that run TypeScript through tsx.
 */
const TOOL_CACHES = /^tsx-\d+$/;

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const folder = mkdtempSync(join(tmpdir(), "bridge-test-run-"));
  process.env.TMPDIR = folder;

  return function teardown() {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    const left = readdirSync(folder).filter((name) => !TOOL_CACHES.test(name));
    rmSync(folder, { recursive: true, force: true });
    if (left.length > 0) {
      // Vitest only logs an error thrown here; the exit code is what fails the run.
      process.exitCode = 1;
      throw new Error(
        `The tests left ${left.length} entries in the temp folder (removed now); ` +
          `the test that made each must remove it, also when it fails: ${left.sort().join(", ")}`,
      );
    }
  };
}
