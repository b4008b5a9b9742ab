import { parseArgs } from "node:util";
import type { SimulatorOptions } from "./options.js";
import { isSseDialect, SSE_DIALECTS, type SseDialect } from "./sse.js";

/** The flags of `npm run simulator`, turned into SimulatorOptions. */

export const USAGE = `usage: npm run simulator -- [--port <0-65535, default 8787>] [--token <bearer>]
  [--rate <tokens per second, default 50>] [--length <answer characters, default 400-1600>]
  [--dialect <${SSE_DIALECTS.join("|")}, default events>]
  [--queue-delay <ms, default 100>] [--keep-alive <ms, default 15000>]`;

export class UsageError extends Error {}

function integer(name: string, raw: string | undefined, min: number, max: number) {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/u.test(raw) || value < min || value > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

export function optionsFromArgs(args: string[]): SimulatorOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        token: { type: "string" },
        rate: { type: "string" },
        length: { type: "string" },
        dialect: { type: "string" },
        "queue-delay": { type: "string" },
        "keep-alive": { type: "string" },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const text = (name: string) => values[name] as string | undefined;
  const options: SimulatorOptions = { port: integer("port", text("port"), 0, 65_535) ?? 8787 };
  const token = text("token");
  if (token !== undefined) {
    if (token.trim() === "") throw new UsageError("--token must not be empty");
    options.token = token;
  }
  const rate = integer("rate", text("rate"), 1, 1_000_000);
  const length = integer("length", text("length"), 1, 10_000_000);
  if (rate !== undefined || length !== undefined) {
    options.answer = {};
    if (rate !== undefined) options.answer.tokensPerSecond = rate;
    if (length !== undefined) options.answer.length = length;
  }
  const dialect = text("dialect");
  if (dialect !== undefined) {
    if (!isSseDialect(dialect)) {
      throw new UsageError(`--dialect must be one of ${SSE_DIALECTS.join(", ")}, got "${dialect}"`);
    }
    options.dialect = dialect satisfies SseDialect;
  }
  const queueDelay = integer("queue-delay", text("queue-delay"), 0, 3_600_000);
  if (queueDelay !== undefined) options.queueDelayMs = queueDelay;
  const keepAlive = integer("keep-alive", text("keep-alive"), 1, 3_600_000);
  if (keepAlive !== undefined) options.keepAliveMs = keepAlive;
  return options;
}
