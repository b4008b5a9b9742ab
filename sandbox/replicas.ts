/**
 * The sandbox's replicas: copies of the real bot (`node --import tsx src/main.ts`), each its
 * own child process on one PostgreSQL database. Child processes rather than several bots in
 * this process, so that `/kill` is a real SIGKILL: nothing is handed back, the leases stay
 * until they expire, exactly what a crashed replica leaves behind. Their JSON log lines go
 * to the sandbox's log file, each prefixed with the replica's number.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const TSX = import.meta.resolve("tsx");

export interface Replica {
  /** 1, 2, …: how the chat names it. */
  readonly number: number;
  readonly pid: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  alive(): boolean;
  /** SIGKILL: the replica dies on the spot, handing nothing back. */
  kill(): Promise<void>;
  /** SIGTERM (it finishes and hands its leases back), SIGKILL after `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

export interface ReplicaOptions {
  number: number;
  /** The bot's settings; PORT is set to 0 here. */
  env: Record<string, string>;
  /** Where each log line goes (prefixed with the replica's number). */
  log: (line: string) => void;
  /** Default 60 s (the first start compiles src/ through tsx). */
  startTimeoutMs?: number;
}

/** Starts one replica and resolves once it listens; rejects with its last output otherwise. */
export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  // An empty working folder: no `.env` is read there.
  const cwd = mkdtempSync(join(tmpdir(), "bridge-replica-"));
  const child: ChildProcess = spawn(process.execPath, ["--import", TSX, MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...options.env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      rmSync(cwd, { recursive: true, force: true });
      resolve();
    }),
  );
  const tail: string[] = [];
  let found: (port: number) => void = () => undefined;
  const port = new Promise<number>((resolve) => {
    found = resolve;
  });
  const onLine = (line: string) => {
    if (line.trim() === "") return;
    options.log(`[replica ${options.number}] ${line}`);
    tail.push(line);
    if (tail.length > 20) tail.shift();
    const started = startedPort(line);
    if (started !== undefined) found(started);
  };
  if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine);
  if (child.stderr) createInterface({ input: child.stderr }).on("line", onLine);

  let timer: NodeJS.Timeout | undefined;
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const outcome = await Promise.race([
    port,
    exited.then(() => "exited" as const),
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (typeof outcome !== "number") {
    child.kill("SIGKILL");
    await exited;
    const why = outcome === "exited" ? "exited at start" : `did not start in ${timeoutMs} ms`;
    throw new Error(`replica ${options.number} ${why}: ${tail.join("\n")}`);
  }
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    number: options.number,
    pid: child.pid ?? -1,
    url: `http://127.0.0.1:${outcome}`,
    alive,
    async kill() {
      if (alive()) child.kill("SIGKILL");
      await exited;
    },
    async stop(graceMs) {
      if (!alive()) return exited;
      child.kill("SIGTERM");
      const force = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(force);
    },
  };
}

/** The port of the bot's "assistant bridge started" JSON line, if this is that line. */
export function startedPort(line: string): number | undefined {
  if (!line.includes("assistant bridge started")) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: unknown; port?: unknown };
    return entry.msg === "assistant bridge started" && typeof entry.port === "number"
      ? entry.port
      : undefined;
  } catch {
    return undefined;
  }
}

/** Which replica a lease holder is (`host:pid:random`, src/bot.ts), by its pid. */
export function replicaOfHolder(holder: string, replicas: readonly Replica[]): number | undefined {
  const pid = Number(holder.split(":").at(-2));
  return replicas.find((r) => r.pid === pid)?.number;
}
