/**
 * `npm run sandbox [-- --say "question"] [options]`: try the bot without Slack. Starts the
 * service simulator, a local stand-in for Slack and the real bot (HTTP mode, signed
 * requests) on 127.0.0.1, then opens a terminal chat, or answers one question and exits.
 * Leaving (/quit, Ctrl-D, SIGINT, SIGTERM, SIGHUP) stops everything it started.
 */
import { watchLaunchers } from "../src/simulator/launcher-watch.js";
import type { ScriptedAnswer } from "../src/simulator/server.js";
import { parseSandboxArgs, type SandboxArgs, USAGE, UsageError } from "./args.js";
import { CHAT_HELP, runChat } from "./chat.js";
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
    ...CHAT_HELP.map((line) => dim(`  ${line}`)),
    dim(`Bot log: ${args.logPath} · simulator ${ws.sim.url} at ${speed} · options: --help`),
    "",
  ];
}

async function main(): Promise<void> {
  let args: SandboxArgs;
  try {
    args = parseSandboxArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`sandbox: ${error.message}\n${USAGE}\n`);
    return exit(2);
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return exit(0);
  }

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
    if (terminal) {
      process.stdout.write(dim("Stopped the bot, the Slack stand-in and the simulator.\n"));
    }
    return exit(code);
  }
  await ws.close();
  return exit(code);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`sandbox: could not run: ${message}\n`);
  exit(1);
});
