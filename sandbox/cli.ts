/**
 * `npm run sandbox [-- --say "question"] [options]`: try the bot without Slack. Starts the
 * service simulator, a local stand-in for Slack and the real bot (HTTP mode, signed
 * requests) on 127.0.0.1, then opens a terminal chat, or answers one question and exits.
 * With `--replicas n`, n copies of the bot run as child processes on a PostgreSQL database
 * of the session's own (on --database-url, DATABASE_URL, or a throwaway server).
 * Leaving (/quit, Ctrl-D, SIGINT, SIGTERM, SIGHUP) stops everything it started.
 */

import { watchLaunchers } from "../tools/simulator/launcher-watch.js";
import type { ScriptedAnswer } from "../tools/simulator/server.js";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../tools/throwaway-postgres.js";
import { parseSandboxArgs, type SandboxArgs, USAGE, UsageError } from "./args.js";
import { helpFor, runChat } from "./chat.js";
import { say } from "./say.js";
import { startWorkspace, type Workspace } from "./workspace.js";

const dim = (text: string) => `\x1b[2m${text}\x1b[0m`;

function exit(code: number): never {
  // Written output reaches a pipe or file before the process ends.
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
  return undefined as never;
}

function scriptedAnswer(args: SandboxArgs): ScriptedAnswer | undefined {
  if (args.answer === undefined && args.fail === undefined) return undefined;
  return {
    ...(args.answer === undefined ? {} : { text: args.answer }),
    ...(args.fail === undefined ? {} : { fail: args.fail }),
  };
}

function banner(args: SandboxArgs, ws: Workspace): string[] {
  const speed = `${args.tokensPerSecond} tokens/s`;
  return [
    "\x1b[1mAssistant bridge sandbox\x1b[0m: the real bot, a stand-in for Slack, the service simulator.",
    ...helpFor(ws).map((line) => dim(`  ${line}`)),
    ...(ws.replicas
      ? [dim(`${ws.replicas.list.length} replicas on PostgreSQL, each message to the next one.`)]
      : []),
    dim(`Bot log: ${args.logPath} · simulator ${ws.sim.url} at ${speed} · options: --help`),
    "",
  ];
}

async function main(): Promise<void> {
  let args: SandboxArgs;
  try {
    args = parseSandboxArgs(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`sandbox: ${error.message}\n${USAGE}\n`);
    return exit(2);
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return exit(0);
  }

  // Replicas without a server: one for this session only, stopped on every way out.
  let throwaway: ThrowawayPostgres | undefined;
  let serverUrl = args.databaseUrl;
  if (args.replicas > 1 && serverUrl === undefined) {
    try {
      throwaway = await startThrowawayPostgres();
    } catch (error) {
      process.stderr.write(
        `sandbox: --replicas needs PostgreSQL, and no throwaway server could start (${(error as Error).message.split("\n")[0]}); pass --database-url postgres://… or set DATABASE_URL\n`,
      );
      return exit(2);
    }
    serverUrl = throwaway.url;
  }
  const stopServer = async () => {
    await throwaway?.stop();
  };

  const answer = scriptedAnswer(args);
  const ws = await startWorkspace({
    simulator: {
      queueDelayMs: args.queueDelayMs,
      answer: {
        tokensPerSecond: args.tokensPerSecond,
        ...(args.length === undefined ? {} : { length: args.length }),
      },
    },
    ...(answer ? { answer } : {}),
    logPath: args.logPath,
    logLevel: args.logLevel,
    ...(args.replicas > 1 && serverUrl ? { replicas: { count: args.replicas, serverUrl } } : {}),
  }).catch(async (error: unknown) => {
    await stopServer();
    throw error;
  });

  const leaving = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => leaving.abort(signal));
  }
  // Under `npm run`, a signal to npm alone does not reach this process (see launcher-watch).
  if (process.env.npm_lifecycle_event === "sandbox") watchLaunchers(() => leaving.abort("npm"));

  let code = 0;
  if (args.say !== undefined) {
    const interrupted = new Promise<undefined>((resolve) =>
      leaving.signal.addEventListener("abort", () => resolve(undefined), { once: true }),
    );
    const result = await Promise.race([say(ws, args.say, args.timeoutSeconds * 1000), interrupted]);
    if (result === undefined) {
      process.stderr.write("sandbox: interrupted\n");
      code = 130;
    } else {
      if (result.answer !== "") process.stdout.write(`${result.answer}\n`);
      if (!result.ok) {
        process.stderr.write(`sandbox: ${result.problem ?? "the answer did not complete"}\n`);
        code = 1;
      }
    }
  } else {
    const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
    await runChat({
      workspace: ws,
      input: process.stdin,
      output: process.stdout,
      terminal,
      banner: banner(args, ws),
      signal: leaving.signal,
    });
    await ws.close();
    await stopServer();
    if (terminal) {
      process.stdout.write(dim("Stopped the bot, the Slack stand-in and the simulator.\n"));
    }
    return exit(code);
  }
  await ws.close();
  await stopServer();
  return exit(code);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`sandbox: could not run: ${message}\n`);
  exit(1);
});
