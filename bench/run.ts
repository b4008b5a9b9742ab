/**
 * `npm run bench`: drives N concurrent conversations through the real bot (its own process)
 * against the fake Slack and the simulator, prints a table and writes the JSON results.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ArgsError, parseArgs, repsFor, USAGE } from "./args.js";
import { compileBot } from "./compile.js";
import {
  aggregate,
  formatTable,
  machine,
  methodNotes,
  type RepFigures,
  repFigures,
} from "./report.js";
import { runScenario } from "./scenario.js";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const options = parseArgs(argv);
  const notes = methodNotes(options);
  process.stdout.write(`${notes.map((n) => `- ${n}`).join("\n")}\n\n`);

  const began = Date.now();
  const compiledMain = options.runtime === "compiled" ? await compileBot() : undefined;
  const rows: ReturnType<typeof aggregate>[] = [];
  const allReps: RepFigures[] = [];
  const problems: Record<string, string[]> = {};
  for (const [index, n] of options.n.entries()) {
    const figures: RepFigures[] = [];
    for (let rep = 1; rep <= repsFor(options, index); rep++) {
      process.stdout.write(`N=${n} repetition ${rep}… `);
      const result = await runScenario({ ...options, n, rep, compiledMain });
      const f = repFigures(result);
      figures.push(f);
      if (result.botProblems.length > 0) problems[`N=${n} rep ${rep}`] = result.botProblems;
      process.stdout.write(
        `${f.wallSeconds.toFixed(1)} s, ack p99 ${f.ackP99.toFixed(1)} ms, exact ${(f.fidelity * 100).toFixed(0)}%` +
          `${f.unsettled > 0 ? `, ${f.unsettled} unsettled` : ""}` +
          `${result.botProblems.length > 0 ? `, ${result.botProblems.length} warnings from the bot` : ""}\n`,
      );
    }
    allReps.push(...figures);
    rows.push(aggregate(figures));
  }
  const runtimeSeconds = Math.round((Date.now() - began) / 1000);

  process.stdout.write(`\n${formatTable(rows)}\n\nTotal runtime ${runtimeSeconds} s.\n`);
  const report = {
    generatedAt: new Date().toISOString(),
    machine: machine(),
    runtimeSeconds,
    options,
    notes,
    rows,
    repetitions: allReps,
    botWarnings: problems,
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`Results written to ${options.out}\n`);
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
