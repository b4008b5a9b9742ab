import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/**
 * The bot as its own process (`node dist/main.js` as `npm start` runs it, or
 * `node --import tsx src/main.ts`), so that the memory and CPU it reports on /metrics are
 * its own and not the fakes' that drive it.
 */

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const TSX = import.meta.resolve("tsx");
/** Variables of the bench's own environment that must not leak into the bot's settings. */
const OWN =
  /^(SLACK_|ASSISTANT_|DATABASE_PATH$|DATABASE_URL$|LEASE_SECONDS$|PORT$|LOG_LEVEL$|RUN_TIMEOUT|SERVICE_OUTAGE)/;

export interface BotProcessOptions {
  /**
   * What to run: a compiled main.js (see compile.ts) under plain node, or, when undefined,
   * src/main.ts through tsx. Default undefined.
   */
  compiledMain?: string;
  /** Another program to run through tsx instead of the bot (bench/template-bot.ts). */
  program?: string;
  /** The bot's settings (contract.md's environment variables); PORT is set to 0 here. */
  env: Record<string, string>;
  /** Working directory; a .env file there would be loaded, so use an empty one. */
  cwd: string;
  /** Default 60_000 ms. */
  startTimeoutMs?: number;
}

export class BotProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    private readonly exited: Promise<number | null>,
    /** Warning and error log lines (at most 200, the first ones), for the report. */
    readonly problems: readonly string[],
  ) {}

  static async start(options: BotProcessOptions): Promise<BotProcess> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && !OWN.test(key)) env[key] = value;
    }
    Object.assign(env, options.env, { PORT: "0" });
    // BENCH_BOT_NODE_ARGS: flags for the bot's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p".
    const flags = (process.env.BENCH_BOT_NODE_ARGS ?? "").split(" ").filter((f) => f !== "");
    const args = options.compiledMain
      ? [...flags, options.compiledMain]
      : [...flags, "--import", TSX, options.program ?? MAIN];
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const problems: string[] = [];
    const tail: string[] = [];
    let found: ((port: number) => void) | undefined;
    const port = new Promise<number>((resolve) => {
      found = resolve;
    });
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      let entry: { level?: unknown; msg?: unknown; port?: unknown };
      try {
        entry = JSON.parse(line);
      } catch {
        if (line.trim() !== "" && problems.length < 200) problems.push(line);
        return;
      }
      if (entry.msg === "assistant bridge started" && typeof entry.port === "number") {
        found?.(entry.port);
      }
      if (typeof entry.level === "number" && entry.level >= 40 && problems.length < 200) {
        problems.push(line);
      }
    };
    if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine);
    if (child.stderr) createInterface({ input: child.stderr }).on("line", onLine);

    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = options.startTimeoutMs ?? 60_000;
    const outcome = await Promise.race([
      port.then((p) => ({ port: p })),
      exited.then((code) => ({ exit: code })),
      new Promise<{ timeout: true }>((resolve) => {
        timer = setTimeout(() => resolve({ timeout: true }), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!("port" in outcome)) {
      child.kill("SIGKILL");
      const why =
        "exit" in outcome ? `exited with ${outcome.exit}` : `did not start in ${timeoutMs} ms`;
      throw new Error(`the bot ${why}; last output:\n${tail.join("\n")}`);
    }
    return new BotProcess(child, `http://127.0.0.1:${outcome.port}`, exited, problems);
  }

  /** The process id (lease holders are named `host:pid:random`). */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** GET on the bot's own HTTP port; the text of the answer. */
  async get(path: string): Promise<{ status: number; text: string }> {
    const response = await fetch(`${this.url}${path}`);
    return { status: response.status, text: await response.text() };
  }

  /** Waits until `/readyz` says 200, polling every 100 ms; throws after `timeoutMs`. */
  async ready(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { status, text } = await this.get("/readyz").catch(() => ({ status: 0, text: "" }));
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`the bot is not ready: ${status} ${text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** SIGTERM (the bot finishes what it does), SIGKILL after `graceMs`; resolves with the exit code. */
  async stop(graceMs = 20_000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

/** The value of one series in Prometheus text, e.g. `bridge_turns_total{outcome="completed"}`. */
export function readSample(metrics: string, series: string): number | undefined {
  for (const line of metrics.split("\n")) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}
