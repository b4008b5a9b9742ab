import { createParser } from "eventsource-parser";
import { type Clock, systemClock } from "../time.js";
import { ProtocolError, type RequestInfo } from "./errors.js";
import { RunStreamDialect, type RunStreamUpdate } from "./run-stream-dialect.js";

/**
 * Reads the body of `GET /v1/run/{id}/stream` (server-sent events) into run updates.
 * The stream only shows progress: whatever it says, the caller takes the final text
 * from the run itself, so the reader is tolerant (see run-stream-dialect.ts) and ends
 * quietly when the connection does; only a stream that breaks the protocol's size
 * bound is an error.
 */

// What the reader yields, defined beside the dialect that makes them (no import cycle).
export type { RunStreamUpdate };

export interface RunStreamOptions {
  /**
   * No bytes at all (keep-alives count) for this long, ms, ends the stream with "idle";
   * default 30_000. Only time spent waiting for the body counts, not time the consumer
   * takes between updates.
   */
  idleTimeoutMs?: number;
  /** The idle timeout's timer; default the system clock. */
  clock?: Clock;
  /** A single event (or an unterminated line) larger than this, bytes, is a ProtocolError; default 1 MiB. */
  maxEventBytes?: number;
  /** The request, for error messages; default `GET /v1/run/{id}/stream`. */
  request?: RequestInfo;
  /**
   * Called exactly once when the stream is over for any reason (end, error, the consumer
   * leaving early), before the last update is handed out: the client aborts the request
   * there.
   */
  onClose?: () => void;
}

type Step =
  | { kind: "chunk"; bytes: Uint8Array }
  | { kind: "eof" }
  | { kind: "broken" }
  | { kind: "idle" };

/** The next chunk, or "idle" when none came within `idleMs` (the pending read is left to the abort). */
function nextStep(
  iterator: AsyncIterator<Uint8Array>,
  idleMs: number,
  clock: Clock,
): Promise<Step> {
  return new Promise<Step>((resolve) => {
    const cancel = clock.timer(idleMs, () => resolve({ kind: "idle" }));
    const settle = (step: Step) => {
      cancel();
      resolve(step);
    };
    try {
      iterator.next().then(
        (result) => settle(result.done ? { kind: "eof" } : { kind: "chunk", bytes: result.value }),
        // A reset connection: what was parsed stands, and the caller falls back to polling.
        () => settle({ kind: "broken" }),
      );
    } catch {
      settle({ kind: "broken" });
    }
  });
}

/** Lets the body go without waiting for it: a read may still be pending until the abort. */
function letGo(iterator: AsyncIterator<Uint8Array>): void {
  try {
    Promise.resolve(iterator.return?.()).catch(() => {});
  } catch {
    // The body is being torn down anyway.
  }
}

async function* readUpdates(
  body: AsyncIterable<Uint8Array>,
  options: RunStreamOptions,
  close: () => void,
): AsyncGenerator<RunStreamUpdate, void, undefined> {
  const {
    idleTimeoutMs = 30_000,
    clock = systemClock,
    maxEventBytes = 1_048_576,
    request = { method: "GET", path: "/v1/run/{id}/stream" },
  } = options;
  const dialect = new RunStreamDialect();
  // Streaming mode keeps a multibyte character split across chunks whole; a leading BOM
  // is dropped by the decoder.
  const decoder = new TextDecoder("utf-8");
  const updates: RunStreamUpdate[] = [];
  let done = false;
  let failure: ProtocolError | undefined;
  const tooLarge = () =>
    new ProtocolError(`A stream event exceeded ${maxEventBytes} bytes`, request);

  const parser = createParser({
    // The parser counts UTF-16 units, never more than the bytes they came from, so this
    // bounds partial lines; whole events are measured in bytes below.
    maxBufferSize: maxEventBytes,
    onEvent: (event) => {
      if (done || failure) return;
      if (Buffer.byteLength(event.data, "utf8") > maxEventBytes) failure = tooLarge();
      else done = dialect.interpret(event, updates);
    },
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") failure ??= tooLarge();
    },
    // Comments (keep-alives) are ignored; unknown fields and bad `retry` lines too.
  });
  let lastChar = "";
  const feed = (text: string) => {
    if (text.length === 0 || failure) return;
    parser.feed(text);
    lastChar = text.charAt(text.length - 1);
  };

  const iterator = body[Symbol.asyncIterator]();
  let bodyOver = false;
  try {
    let reason: "done" | "eof" | "idle" = "done";
    for (;;) {
      const step = await nextStep(iterator, idleTimeoutMs, clock);
      if (step.kind === "chunk") {
        feed(decoder.decode(step.bytes, { stream: true }));
      } else if (step.kind !== "idle") {
        bodyOver = true;
        feed(decoder.decode());
        // A final CR may end a line; the parser waits for a possible LF that will never
        // come, so give it one (CR LF is a single line break).
        if (lastChar === "\r") feed("\n");
      }
      while (updates.length > 0) yield updates.shift() as RunStreamUpdate;
      if (failure) throw failure;
      if (done) break;
      if (step.kind !== "chunk") {
        reason = step.kind === "idle" ? "idle" : "eof";
        break;
      }
    }
    close();
    yield { type: "end", reason };
  } finally {
    close();
    if (!bodyOver) letGo(iterator);
  }
}

/**
 * Turns an SSE body into run updates. `onClose` is called exactly once however the
 * generator finishes, including when it is returned before it was ever read.
 */
export function readRunStream(
  body: AsyncIterable<Uint8Array>,
  options: RunStreamOptions = {},
): AsyncGenerator<RunStreamUpdate, void, undefined> {
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    options.onClose?.();
  };
  const inner = readUpdates(body, options, close);
  // A generator returned before its first next() never runs its finally block; this
  // wrapper closes in that case too.
  const outer: AsyncGenerator<RunStreamUpdate, void, undefined> = {
    next: (...args) => inner.next(...args),
    return: (value) => inner.return(value).finally(close),
    throw: (error) => inner.throw(error).finally(close),
    [Symbol.asyncIterator]: () => outer,
  };
  return outer;
}
