/** `npm run sandbox -- --say …` as scripts use it: stdout, stderr and the exit code. */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "sandbox-cli-"));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sandbox(args: string[]): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "sandbox/cli.ts", "--log", join(dir, `${args.length}.log`), ...args],
      { cwd: ROOT, timeout: 30_000 },
      (error, stdout, stderr) => done({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

describe("npm run sandbox -- --say", () => {
  it("prints the final answer and exits 0; a failed run or a bad flag exits non-zero with a reason", async () => {
    const answer = "# Yes\n\nIt *works*: `1 < 2 && 3 > 2`.";
    const [ok, failed, usage] = await Promise.all([
      sandbox(["--say", "does it work?", "--answer", answer, "--tokens-per-second", "1000"]),
      sandbox(["--say", "and now?", "--fail", "out of tokens", "--queue-delay", "0"]),
      sandbox(["--say", "x", "--tokens-per-second", "fast"]),
    ]);
    expect(ok).toEqual({ code: 0, stdout: `${answer}\n`, stderr: "" });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe("sandbox: The run failed: out of tokens\n");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^sandbox: --tokens-per-second must be a whole number/);
    expect(usage.stderr).toContain("usage: npm run sandbox -- [options]");
  });
});
