/**
 * `npm run simulator -- --port 8787 [--token secret] [--rate 50] [--length 1200]
 * [--dialect events] [--queue-delay 100] [--keep-alive 15000]`
 *
 * Starts the service simulator on 127.0.0.1 and runs until SIGINT or SIGTERM.
 */
import { optionsFromArgs, USAGE, UsageError } from "./cli-args.js";
import { watchLaunchers } from "./launcher-watch.js";
import type { SimulatorOptions } from "./options.js";
import { startSimulator } from "./server.js";

async function main(): Promise<void> {
  let options: SimulatorOptions;
  try {
    options = optionsFromArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`simulator: ${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const simulator = await startSimulator(options);
  const dialect = options.dialect ?? "events";
  const auth = options.token === undefined ? "any bearer token" : "one bearer token";
  process.stdout.write(
    `Assistant service simulator listening on ${simulator.url} (stream dialect ${dialect}, ${auth})\n`,
  );
  const stop = () => {
    void simulator.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // npm sets this for its run scripts: only then is the launcher chain npm → sh → tsx known.
  if (process.env.npm_lifecycle_event === "simulator") watchLaunchers(stop);
}

main().catch((error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  const message = code === "EADDRINUSE" ? "the port is already in use" : String(error);
  process.stderr.write(`simulator: could not start: ${message}\n`);
  process.exit(1);
});
