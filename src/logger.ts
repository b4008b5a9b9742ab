import type { Logger as BoltLogger, LogLevel as BoltLogLevel } from "@slack/bolt";
import { pino } from "pino";
import pretty from "pino-pretty";
import type { LogLevel } from "./config.js";

export type Logger = pino.Logger;

export interface LoggerOptions {
  level: LogLevel;
  /** Readable lines instead of JSON; default: when stdout is a terminal. */
  pretty?: boolean;
  /** Where lines go; default stdout. Tests pass a stream to read the logs back. */
  destination?: NodeJS.WritableStream;
}

/**
 * Paths that could ever carry a secret or a person's words. Our own code never logs them,
 * but a library error object might; pino removes them before anything is written.
 */
const REDACT = [
  "token",
  "*.token",
  "authorization",
  "*.authorization",
  "headers",
  "*.headers",
  "signingSecret",
  "*.signingSecret",
  "text",
  "*.text",
  "content",
  "*.content",
];

const SECRET = /\b(xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|Bearer\s+[^\s"']+)/g;

/** Masks anything that looks like a Slack token or a bearer credential. */
export function scrub(text: string): string {
  return text.replace(SECRET, (match) => `${match.slice(0, 5)}…[redacted]`);
}

export function createLogger({ level, pretty: usePretty, destination }: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: REDACT, censor: "[redacted]" },
    base: { service: "slack-assistant-bridge" },
    hooks: {
      // Messages built by libraries (Bolt's log lines) may quote URLs or errors: scrub them.
      logMethod(args, method) {
        const scrubbed = args.map((a) => (typeof a === "string" ? scrub(a) : a)) as typeof args;
        method.apply(this, scrubbed);
      },
    },
  };
  const readable = usePretty ?? (destination === undefined && process.stdout.isTTY === true);
  if (readable) {
    return pino(
      options,
      pretty({
        colorize: destination === undefined,
        translateTime: "HH:MM:ss",
        ignore: "pid,hostname,service",
        destination: destination ?? 1,
        sync: true,
      }),
    );
  }
  return destination ? pino(options, destination) : pino(options);
}

/** Bolt's Logger interface over our logger, so Bolt's lines go through the same redaction. */
export function boltLogger(logger: Logger): BoltLogger {
  const child = logger.child({ component: "bolt" });
  const line = (msg: unknown[]) =>
    scrub(
      msg
        .map((m) => (m instanceof Error ? m.message : typeof m === "string" ? m : safeJson(m)))
        .join(" "),
    );
  let level = logger.level as BoltLogLevel;
  return {
    debug: (...msg: unknown[]) => child.debug(line(msg)),
    info: (...msg: unknown[]) => child.info(line(msg)),
    warn: (...msg: unknown[]) => child.warn(line(msg)),
    error: (...msg: unknown[]) => child.error(line(msg)),
    setLevel: (l: BoltLogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
