/** The benchmark's command line: `npm run bench -- --n 1,10 --reps 1`. */

export interface BenchOptions {
  /** Concurrent conversations per scenario. Default 1, 10, 50. */
  n: number[];
  /**
   * Channels the conversations of each N are spread over (round robin), one scenario per
   * entry; an entry above N counts as N. Default 1 and 10.
   */
  channels: number[];
  /**
   * Repetitions per entry of `n`: one number for all, or one per entry. Default 3 each, and 1
   * from N = 200 up (one such run takes minutes: Slack allows ~50 edits a minute in all).
   */
  reps: number[] | undefined;
  /**
   * Answer lengths are drawn evenly from this range, characters. Default 1500–1500 (the
   * generator ends on a whole block, so answers come out a few characters shorter).
   */
  minChars: number;
  maxChars: number;
  /** The service writes each answer in pieces of exactly this many characters. Default 4. */
  pieceChars: number;
  /** Pieces written per second. Default 50 (with 4-character pieces, 200 characters a second). */
  piecesPerSecond: number;
  /**
   * Run starts per minute, given to the simulator AND the bot. Default 600 (the service's
   * real limit is 20, which alone would take 10 minutes to start 200 answers).
   */
  runStartsPerMinute: number;
  /** People asking (round robin). Default 50. */
  users: number;
  /** Questions arrive at this rate, per second. Default 50. */
  arrivalsPerSecond: number;
  /** The visible text's lag is sampled every this many ms (from the stamps). Default 100. */
  sampleMs: number;
  /** Give up on a scenario after this long, ms. Default 600_000. */
  timeoutMs: number;
  /** Seed of the answer lengths. Default 1. */
  seed: number;
  /** Where the JSON results go. Default bench/results/latest.json. */
  out: string;
  /**
   * How the bot runs: "compiled" (tsc build under plain node, as `npm start`) or "tsx"
   * (src/main.ts through tsx, which costs ~20 MB more memory). Default "compiled".
   */
  runtime: "compiled" | "tsx";
  /**
   * Copies of the bot sharing the work, each its own process, on one fresh PostgreSQL
   * database per scenario when above 1. Default 1 (one process on SQLite).
   */
  replicas: number;
  /**
   * The bot's state in PostgreSQL (a fresh database per scenario) rather than SQLite: always
   * with replicas, and with one when `--postgres` is given (what PostgreSQL alone costs).
   */
  postgres: boolean;
  /**
   * The PostgreSQL server for replicas: --database-url, else DATABASE_URL, else
   * TEST_DATABASE_URL, else a throwaway server (run.ts). Never written to the results.
   */
  databaseUrl: string | undefined;
  /**
   * On PostgreSQL, single replicas' results to compare with, each when its file exists.
   * Default: one replica on PostgreSQL (POSTGRES_OUT: the same database, so the difference
   * is what the replicas cost), then on SQLite (bench/results/latest.json); or those named
   * by --compare-with, which may be repeated.
   */
  compareWith: string[];
  /**
   * Each repetition run again with Slack's own agent template (bench/template-bot.ts) in the
   * bot's place, on fresh fakes and the same workload, and the two printed side by side.
   * Default false (--with-template).
   */
  withTemplate: boolean;
  /**
   * One bot on SQLite or on PostgreSQL run beside this run, each repetition, on fresh fakes and
   * the same workload, taking turns to go first, and the two printed side by side: a comparison
   * that the machine's drift between runs falls on alike. Default none (--beside, repeatable).
   */
  beside: BesideSetup[];
}

/** What --beside runs: one bot, on SQLite or on PostgreSQL. */
export type BesideSetup = "sqlite" | "postgres";

export const DEFAULT_OPTIONS: BenchOptions = {
  n: [1, 10, 50],
  channels: [1, 10],
  reps: undefined,
  minChars: 1500,
  maxChars: 1500,
  pieceChars: 4,
  piecesPerSecond: 50,
  runStartsPerMinute: 600,
  users: 50,
  arrivalsPerSecond: 50,
  sampleMs: 100,
  timeoutMs: 600_000,
  seed: 1,
  out: "bench/results/latest.json",
  runtime: "compiled",
  replicas: 1,
  postgres: false,
  databaseUrl: undefined,
  compareWith: [],
  withTemplate: false,
  beside: [],
};

/** Where replicas' results go by default: next to one replica's, not over them. */
export const REPLICAS_OUT = "bench/results/latest-replicas.json";
/** Where one replica's results on PostgreSQL (--postgres) go by default. */
export const POSTGRES_OUT = "bench/results/latest-postgres.json";

export class ArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArgsError";
  }
}

export const USAGE = `usage: npm run bench -- [--n 1,10,50] [--channels 1,10] [--reps 3|3,3,1]
  [--min-chars 1500] [--max-chars 1500] [--piece-chars 4] [--pieces-per-second 50]
  [--run-starts-per-minute 600] [--users 50] [--arrivals-per-second 50] [--sample-ms 100]
  [--timeout-ms 600000] [--seed 1] [--out bench/results/latest.json] [--runtime compiled|tsx]
  [--replicas 1] [--postgres] [--database-url postgres://…]
  [--compare-with bench/results/latest-postgres.json] [--with-template]
  [--beside sqlite|postgres]
  --replicas n runs n copies of the bot on one PostgreSQL database (--database-url, else
  DATABASE_URL, else TEST_DATABASE_URL, else a throwaway embedded server); --postgres runs
  one copy there. The results go to bench/results/latest-replicas.json (latest-postgres.json
  for one copy) unless --out says otherwise, and are compared with one replica's: on
  PostgreSQL (latest-postgres.json), then on SQLite (latest.json), each when its file exists,
  or with those --compare-with names (the flag may be repeated). --with-template runs every
  repetition again with Slack's own agent template in the bot's place and prints the two
  side by side. --beside sqlite (or postgres, repeatable) runs every repetition again with one
  bot on SQLite (on PostgreSQL), the two taking turns to go first, and prints them side by side.`;

const NUMERIC: Record<string, keyof BenchOptions> = {
  "--min-chars": "minChars",
  "--max-chars": "maxChars",
  "--piece-chars": "pieceChars",
  "--pieces-per-second": "piecesPerSecond",
  "--run-starts-per-minute": "runStartsPerMinute",
  "--users": "users",
  "--arrivals-per-second": "arrivalsPerSecond",
  "--sample-ms": "sampleMs",
  "--timeout-ms": "timeoutMs",
  "--seed": "seed",
};

function positive(flag: string, raw: string): number {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value <= 0) {
    throw new ArgsError(`${flag} must be a positive number, got "${raw}"`);
  }
  return value;
}

function counts(flag: string, raw: string): number[] {
  const values = raw.split(",").map((part) => positive(flag, part));
  if (values.some((v) => !Number.isInteger(v))) {
    throw new ArgsError(`${flag} takes whole numbers, got "${raw}"`);
  }
  return values;
}

/** Reads `--flag value` and `--flag=value` pairs; unknown flags are an error. */
export function parseArgs(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): BenchOptions {
  const options: BenchOptions = { ...DEFAULT_OPTIONS, compareWith: [], beside: [] };
  let outGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const next = (): string => {
      if (eq > 0) return arg.slice(eq + 1);
      const value = argv[++i];
      if (value === undefined) throw new ArgsError(`${flag} needs a value`);
      return value;
    };
    if (flag === "--n") options.n = counts(flag, next());
    else if (flag === "--channels") options.channels = counts(flag, next());
    else if (flag === "--reps") options.reps = counts(flag, next());
    else if (flag === "--out") {
      options.out = next();
      outGiven = true;
    } else if (flag === "--replicas") {
      const [count, ...more] = counts(flag, next());
      if (count === undefined || more.length > 0 || count > 10) {
        throw new ArgsError("--replicas takes one whole number from 1 to 10");
      }
      options.replicas = count;
    } else if (flag === "--postgres") options.postgres = true;
    else if (flag === "--database-url") options.databaseUrl = next();
    else if (flag === "--compare-with") options.compareWith.push(next());
    else if (flag === "--with-template") options.withTemplate = true;
    else if (flag === "--beside") {
      const setup = next();
      if (setup !== "sqlite" && setup !== "postgres") {
        throw new ArgsError(`--beside is sqlite or postgres, got "${setup}"`);
      }
      options.beside.push(setup);
    } else if (flag === "--runtime") {
      const runtime = next();
      if (runtime !== "compiled" && runtime !== "tsx") {
        throw new ArgsError(`--runtime is compiled or tsx, got "${runtime}"`);
      }
      options.runtime = runtime;
    } else if (flag in NUMERIC) {
      const key = NUMERIC[flag] as keyof BenchOptions;
      (options as unknown as Record<string, number>)[key] = positive(flag, next());
    } else throw new ArgsError(`unknown option ${arg}`);
  }
  options.databaseUrl ??= env.DATABASE_URL || env.TEST_DATABASE_URL || undefined;
  if (options.databaseUrl !== undefined && !/^postgres(ql)?:\/\/./.test(options.databaseUrl)) {
    // Not quoted back: it may hold a password.
    throw new ArgsError("--database-url (or DATABASE_URL, TEST_DATABASE_URL) must be postgres://…");
  }
  if (options.replicas > 1) options.postgres = true;
  if (options.postgres && !outGiven) {
    options.out = options.replicas > 1 ? REPLICAS_OUT : POSTGRES_OUT;
  }
  if (options.postgres && options.compareWith.length === 0) {
    const single = [DEFAULT_OPTIONS.out];
    options.compareWith = options.replicas > 1 ? [POSTGRES_OUT, ...single] : single;
  }
  const reps = options.reps;
  if (reps !== undefined && reps.length !== 1 && reps.length !== options.n.length) {
    throw new ArgsError("--reps takes one number, or one per entry of --n");
  }
  if (options.minChars > options.maxChars) {
    throw new ArgsError("--min-chars must not exceed --max-chars");
  }
  for (const key of ["users", "minChars", "maxChars", "pieceChars", "seed"] as const) {
    if (!Number.isInteger(options[key])) throw new ArgsError(`${key} must be a whole number`);
  }
  return options;
}

/** The repetitions for the i-th entry of `n`. */
export function repsFor(options: BenchOptions, index: number): number {
  const { reps, n } = options;
  if (reps === undefined) return (n[index] ?? 0) >= 200 ? 1 : 3;
  return (reps.length === 1 ? reps[0] : reps[index]) as number;
}

/** One scenario of a run: N conversations over so many channels, repeated `reps` times. */
export interface Scenario {
  n: number;
  channels: number;
  reps: number;
}

/** Every N with every channel count (at most N), in order, each once. */
export function scenarios(options: BenchOptions): Scenario[] {
  const out: Scenario[] = [];
  for (const [index, n] of options.n.entries()) {
    for (const c of options.channels) {
      const channels = Math.min(c, n);
      if (out.some((s) => s.n === n && s.channels === channels)) continue;
      out.push({ n, channels, reps: repsFor(options, index) });
    }
  }
  return out;
}
