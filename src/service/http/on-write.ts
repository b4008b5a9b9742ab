import { Readable } from "node:stream";
import type { Dispatcher } from "undici";

/** What the request failed with when `onWrite` failed: the request was never written. */
export class NotWritten extends Error {
  constructor(cause: unknown) {
    super("the request was not written: the caller refused", { cause });
    this.name = "NotWritten";
  }
}

/** A request whose first byte waits for `onWrite` (see `writing`). */
export interface HeldRequest {
  dispatcher: Dispatcher;
  /** The body to send: nothing of the request, not even its head, is written before it yields. */
  body: Readable;
  /** Its length in bytes, for its `content-length` header. */
  length: number;
}

/**
 * A dispatcher that calls `onWrite` once the request has a connection, not when it is handed
 * to the pool (a connection still being opened is not a request sent), and writes nothing
 * until what `onWrite` returned has resolved. undici writes a request's head with the first
 * chunk of a streamed body, so the body is a stream that yields nothing until then: a caller that
 * records "sent" there has recorded it before any byte reaches the service, and one that dies
 * while recording has sent nothing. When `onWrite` throws or rejects, nothing is written and
 * the request fails with NotWritten; a request aborted before its connection came (its
 * signal) is never written and `onWrite` not called.
 */
export function writing(
  dispatcher: Dispatcher,
  onWrite: () => void | Promise<void>,
  text: string,
): HeldRequest {
  const bytes = Buffer.from(text);
  let open: () => void = () => undefined;
  let refuse: (error: NotWritten) => void = () => undefined;
  const written = new Promise<void>((resolve, reject) => {
    open = resolve;
    refuse = reject;
  });
  // Never iterated (aborted before its connection came): nobody waits for it.
  written.catch(() => undefined);
  const gate = { open, refuse };
  async function* body(): AsyncGenerator<Uint8Array> {
    await written;
    yield bytes;
  }
  return {
    dispatcher: dispatcher.compose((dispatch) => (options, handler) => {
      return dispatch(options, new CallingOnWrite(handler, onWrite, gate));
    }),
    body: Readable.from(body(), { objectMode: false }),
    length: bytes.byteLength,
  };
}

type Handler = Required<Dispatcher.DispatchHandler>;

interface Gate {
  open(): void;
  refuse(error: NotWritten): void;
}

class CallingOnWrite implements Dispatcher.DispatchHandler {
  #called = false;

  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly onWrite: () => void | Promise<void>,
    private readonly gate: Gate,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    // The caller's own handler first: a request whose signal fired meanwhile aborts there.
    this.inner.onRequestStart?.(controller, context);
    if (this.#called || controller.aborted) return;
    this.#called = true;
    let recording: void | Promise<void>;
    try {
      recording = this.onWrite();
    } catch (error) {
      this.gate.refuse(new NotWritten(error));
      controller.abort(new NotWritten(error));
      return;
    }
    Promise.resolve(recording).then(this.gate.open, (error: unknown) => {
      this.gate.refuse(new NotWritten(error));
    });
  }

  onRequestUpgrade(...args: Parameters<Handler["onRequestUpgrade"]>) {
    this.inner.onRequestUpgrade?.(...args);
  }

  onResponseStart(...args: Parameters<Handler["onResponseStart"]>) {
    this.inner.onResponseStart?.(...args);
  }

  onResponseData(...args: Parameters<Handler["onResponseData"]>) {
    this.inner.onResponseData?.(...args);
  }

  onResponseEnd(...args: Parameters<Handler["onResponseEnd"]>) {
    this.inner.onResponseEnd?.(...args);
  }

  onResponseError(...args: Parameters<Handler["onResponseError"]>) {
    this.inner.onResponseError?.(...args);
  }
}
