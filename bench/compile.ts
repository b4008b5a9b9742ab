import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Builds the bot as `npm start` runs it (tsc, tsconfig.build.json) into a directory of the
 * bench's own, so the figures are those of the production build and `dist/` is left alone.
 * Under node_modules/.cache so that the build finds the project's packages, in a directory
 * named after the checkout: worktrees that share one node_modules must not build over each
 * other's bot while it runs.
 */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CHECKOUT = createHash("sha256").update(ROOT).digest("hex").slice(0, 8);
const OUT = join(ROOT, "node_modules", ".cache", `bench-bot-${CHECKOUT}`);

/** Compiles src/ and resolves with the path of the compiled main.js. */
export async function compileBot(): Promise<string> {
  rmSync(OUT, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const args = [
    tsc,
    "-p",
    join(ROOT, "tsconfig.build.json"),
    "--outDir",
    OUT,
    "--sourceMap",
    "false",
  ];
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT }, (error, stdout) => {
      resolve(error ? stdout.split("\n").slice(0, 5).join("\n") : undefined);
    });
  });
  const main = join(OUT, "main.js");
  // tsc emits despite type errors; only a missing entry is fatal.
  if (!existsSync(main)) throw new Error(`could not compile the bot:\n${failure ?? ""}`);
  if (failure) process.stderr.write(`warning: the bot compiled with type errors:\n${failure}\n`);
  // Package scopes stop at node_modules: say that these files are ES modules.
  writeFileSync(join(OUT, "package.json"), '{ "type": "module" }\n');
  return main;
}
