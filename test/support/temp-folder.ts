import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";

/**
 * A fresh folder in the temp folder, removed once the current test has finished (after its
 * afterEach hooks, so child processes are gone), whether it passed or failed. Call it from a
 * test or a beforeEach.
 */
export function tempFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  return folder;
}
