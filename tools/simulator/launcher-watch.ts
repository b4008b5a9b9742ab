import { readFileSync } from "node:fs";

/**
 * `npm run simulator` starts `sh -c "tsx tools/simulator/cli.ts"`, and tsx starts this
 * process. A SIGTERM sent to npm reaches `sh`, which dies without passing it on, so the
 * simulator would outlive npm and keep its port. Watching the launcher chain (tsx → sh →
 * npm) and shutting down when a link breaks makes "kill npm" stop the simulator too.
 * Linux only (it reads /proc); elsewhere it watches nothing.
 */

/** The parent pid of `pid`, or undefined when the process is gone or /proc is missing. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …"; comm may itself contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Calls `onGone` once when this process's parent or any of the `depth` launchers above it
 * is no longer where it was at start. Returns a function that stops watching.
 */
export function watchLaunchers(onGone: () => void, depth = 3, intervalMs = 500): () => void {
  const chain: number[] = [process.ppid];
  for (let i = 1; i < depth; i++) {
    const parent = parentOf(chain[i - 1] ?? 0);
    if (parent === undefined || parent <= 1) break;
    chain.push(parent);
  }
  if (parentOf(process.pid) === undefined) return () => undefined;
  const timer = setInterval(() => {
    const intact =
      process.ppid === chain[0] &&
      chain.every((pid, i) => i + 1 >= chain.length || parentOf(pid) === chain[i + 1]);
    if (intact) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
