import type { Logger as BoltLogger, LogLevel as BoltLogLevel } from "@slack/bolt";
import { pino } from "pino";
import pretty from "pino-pretty";
import type { LogLevel } from "./config.js";
import { KnownSecrets } from "./log-scrub.js";

export type Logger = pino.Logger;

export interface LoggerOptions {
  level: LogLevel;
  /**
   * Values no line may carry (`configuredSecrets(config)`): every token and secret of the
   * settings. Required, so no caller can forget them.
   */
  secrets: readonly string[];
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

export function createLogger(options: LoggerOptions): Logger {
  const { level, secrets, pretty: usePretty, destination } = options;
  const known = new KnownSecrets(secrets);
  const scrub = (text: string) => known.scrub(text);
  const pinoOptions: pino.LoggerOptions = {
    level,
    redact: { paths: REDACT, censor: "[redacted]" },
    base: { service: "slack-assistant-bridge" },
    // The whole JSON line, just before it is written: a secret is masked at any depth, in
    // whatever field a library error put it, before the pretty printer or stdout sees it.
    hooks: { streamWrite: scrub },
  };
  const logger = build(pinoOptions, usePretty, destination);
  learners.set(logger, known);
  return logger;
}

/**
 * Teaches a logger made by createLogger one more secret to mask (a person's token, once the
 * bot holds it); a logger made otherwise (a test's) has nothing to learn.
 */
export function learnSecret(logger: Logger, secret: string): void {
  learners.get(logger)?.learn(secret);
}

const learners = new WeakMap<Logger, KnownSecrets>();

function build(
  pinoOptions: pino.LoggerOptions,
  usePretty: boolean | undefined,
  destination: NodeJS.WritableStream | undefined,
): Logger {
  const readable = usePretty ?? (destination === undefined && process.stdout.isTTY === true);
  if (readable) {
    return pino(
      pinoOptions,
      pretty({
        colorize: destination === undefined,
        translateTime: "HH:MM:ss",
        ignore: "pid,hostname,service",
        destination: destination ?? 1,
        sync: true,
      }),
    );
  }
  return destination ? pino(pinoOptions, destination) : pino(pinoOptions);
}

/** Bolt's Logger interface over our logger, so Bolt's lines go through the same scrubbing. */
export function boltLogger(logger: Logger): BoltLogger {
  const child = logger.child({ component: "bolt" });
  const line = (msg: unknown[]) =>
    msg
      .map((m) => (m instanceof Error ? m.message : typeof m === "string" ? m : safeJson(m)))
      .join(" ");
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
