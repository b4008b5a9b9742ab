/**
 * `npm run bench`: drives N concurrent conversations, in one channel and spread over several,
 * through the real bot (its own process) against the fake Slack and the simulator; prints
 * the figures beside Slack's floor for each workload, the targets with pass or FAIL, and
 * writes the JSON results.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname } from "node:path";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../tools/throwaway-postgres.js";
import { ArgsError, type BenchOptions, parseArgs, scenarios, USAGE } from "./args.js";
import { compileBot } from "./compile.js";
import { compareRows, formatComparison, formatReplicaTable } from "./replica-tables.js";
import {
  aggregate,
  machine,
  methodNotes,
  type RepFigures,
  type Row,
  repFigures,
} from "./report.js";
import { runScenario, type ScenarioResult } from "./scenario.js";
import { type Side, sidesOf, turns } from "./sides.js";
import { formatAgainstTemplate, formatTables } from "./tables.js";
import { formatVerdicts, judge } from "./targets.js";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const options = parseArgs(argv, process.env);
  const notes = methodNotes(options);
  // Replicas without a server given: one for this run only.
  let throwaway: ThrowawayPostgres | undefined;
  const onPostgres = options.postgres || options.beside.includes("postgres");
  if (onPostgres && options.databaseUrl === undefined) {
    throwaway = await startThrowawayPostgres();
  }
  const stop = async () => {
    await throwaway?.stop();
  };
  process.once("SIGINT", () => void stop().finally(() => process.exit(130)));
  try {
    await measure(options, notes, throwaway?.url ?? options.databaseUrl);
  } finally {
    await stop();
  }
}

async function measure(
  options: BenchOptions,
  notes: string[],
  databaseServerUrl: string | undefined,
): Promise<void> {
  process.stdout.write(`${notes.map((n) => `- ${n}`).join("\n")}\n\n`);

  const began = Date.now();
  const compiledMain = options.runtime === "compiled" ? await compileBot() : undefined;
  const rows: Row[] = [];
  const allReps: RepFigures[] = [];
  const sides = sidesOf(options);
  const problems: Record<string, string[]> = {};
  for (const { n, channels, reps } of scenarios(options)) {
    const name = `N=${n} over ${channels} channel${channels === 1 ? "" : "s"}`;
    const figures: RepFigures[] = [];
    const theirs = sides.map((): RepFigures[] => []);
    for (let rep = 1; rep <= reps; rep++) {
      for (const turn of turns(rep, sides.length)) {
        const base = { ...options, n, channels, rep, compiledMain, databaseServerUrl };
        const side = turn === undefined ? undefined : sides[turn];
        if (turn === undefined || !side) {
          process.stdout.write(`${name}, repetition ${rep}… `);
          const result = await runScenario(base);
          if (result.botProblems.length > 0) problems[`${name} rep ${rep}`] = result.botProblems;
          figures.push(reportRepetition(result));
        } else {
          process.stdout.write(`  ${side.name}, repetition ${rep}… `);
          const result = await runScenario({ ...base, ...side.setup });
          theirs[turn]?.push(reportRepetition(result));
        }
      }
    }
    allReps.push(...figures);
    rows.push(aggregate(figures));
    sides.forEach((side, i) => {
      side.repetitions.push(...(theirs[i] ?? []));
      side.rows.push(aggregate(theirs[i] ?? []));
    });
  }
  const runtimeSeconds = Math.round((Date.now() - began) / 1000);
  const verdicts = judge(rows);

  process.stdout.write(
    `\nreplicas: ${options.replicas}\n${formatTables(rows)}\n\nTargets:\n${formatVerdicts(verdicts)}\n`,
  );
  const beside = sides.flatMap((side) => besideReport(side, rows) ?? []);
  const comparison = options.postgres ? replicaReport(options, rows) : undefined;
  process.stdout.write(`\nTotal runtime ${runtimeSeconds} s.\n`);
  // The server's URL may hold a password: it is not written down.
  const { databaseUrl: _url, ...written } = options;
  const template = sides.find((side) => side.setup.template);
  const report = {
    generatedAt: new Date().toISOString(),
    machine: machine(),
    runtimeSeconds,
    options: written,
    ...(comparison ? { comparedWithOneReplica: comparison } : {}),
    ...(template
      ? { slackTemplate: { rows: template.rows, repetitions: template.repetitions } }
      : {}),
    ...(beside.length > 0 ? { beside } : {}),
    notes,
    rows,
    targets: verdicts,
    repetitions: allReps,
    botWarnings: problems,
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`Results written to ${options.out}\n`);
}

/**
 * One repetition's figures, with the machine's load as it ended, and the line that tells how
 * it went: the repetitions of one run drift apart as much as runs do, and the load says
 * whether the machine did.
 */
function reportRepetition(result: ScenarioResult): RepFigures {
  const [load = Number.NaN] = loadavg();
  const f = { ...repFigures(result), loadAverage: load };
  process.stdout.write(
    `${f.wallSeconds.toFixed(1)} s, first word p50 ${f.askedFirstWordP50.toFixed(0)} ms from the question, p95 ${f.firstWordP95.toFixed(0)} ms after the first piece, after last piece p95 ${f.afterLastPieceP95.toFixed(0)} ms, exact ${(f.fidelity * 100).toFixed(0)}%, load ${load.toFixed(2)}` +
      `${f.slack429 > 0 ? `, ${f.slack429} Slack 429s` : ""}` +
      `${f.unsettled > 0 ? `, ${f.unsettled} unsettled` : ""}` +
      `${f.outsideDisagreementMs > 1 ? `, the outside view disagrees by up to ${f.outsideDisagreementMs.toFixed(0)} ms` : ""}` +
      `${result.botProblems.length > 0 ? `, ${result.botProblems.length} warnings from the bot` : ""}\n`,
  );
  return f;
}

/**
 * Prints a side beside the run: the template in its own table; one bot on a database figure by
 * figure, returned for the results.
 */
function besideReport(side: Side, rows: Row[]) {
  if (side.setup.template) {
    process.stdout.write(
      `\nBeside ${side.name} (ours | template), same workload, fresh fakes:\n${formatAgainstTemplate(rows, side.rows)}\n`,
    );
    return undefined;
  }
  const figures = compareRows(side.rows, rows);
  process.stdout.write(
    `\nBeside ${side.name}, run in turn each repetition:\n${formatComparison(figures, [side.name, "this run"])}\n`,
  );
  return { name: side.name, rows: side.rows, repetitions: side.repetitions, figures };
}

/** Prints each replica's share and its figures beside each single replica's results found. */
function replicaReport(options: BenchOptions, rows: Row[]) {
  process.stdout.write(`\nEach replica (a/b/…):\n${formatReplicaTable(rows)}\n`);
  return options.compareWith.flatMap((file) => {
    const compared = compareWithFile(file, options, rows);
    return compared ? [compared] : [];
  });
}

/** The figures beside one replica's in `file`, printed; undefined when it has none. */
function compareWithFile(file: string, options: BenchOptions, rows: Row[]) {
  if (!existsSync(file)) {
    process.stdout.write(`\nNo single-replica results at ${file} to compare with.\n`);
    return undefined;
  }
  const single = JSON.parse(readFileSync(file, "utf8")) as {
    rows?: Row[];
    options?: { replicas?: number; postgres?: boolean };
  };
  if ((single.options?.replicas ?? 1) !== 1 || !single.rows) {
    process.stdout.write(`\n${file} is not a single replica's run.\n`);
    return undefined;
  }
  const database = single.options?.postgres ? "PostgreSQL" : "SQLite";
  const figures = compareRows(single.rows, rows);
  process.stdout.write(
    `\nAgainst one replica on ${database} (${file}):\n${formatComparison(figures, ["1 replica", `${options.replicas} replicas`])}\n`,
  );
  return { file, database, figures };
}

main().catch((error: unknown) => {
  if (error instanceof ArgsError) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
