import type { Dispatcher } from "undici";

/** What the request failed with when `onWrite` threw: the request was never written. */
export class NotWritten extends Error {
  constructor(cause: unknown) {
    super("the request was not written: the caller refused", { cause });
    this.name = "NotWritten";
  }
}

/**
 * A dispatcher that calls `onWrite` once the request has a connection, just before its first
 * byte is written to it (in the same turn of the event loop), not when it is handed to the
 * pool: a connection still being opened is not a request sent. A caller that records "sent"
 * there leaves almost no moment in which it could die with the record made and nothing sent.
 * When `onWrite` throws, nothing is written and the request fails with NotWritten; a request
 * aborted before its connection came (its signal) is never written and `onWrite` not called.
 */
export function writing(dispatcher: Dispatcher, onWrite: () => void): Dispatcher {
  return dispatcher.compose((dispatch) => (options, handler) => {
    return dispatch(options, new CallingOnWrite(handler, onWrite));
  });
}

type Handler = Required<Dispatcher.DispatchHandler>;

class CallingOnWrite implements Dispatcher.DispatchHandler {
  #called = false;

  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly onWrite: () => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    // The caller's own handler first: a request whose signal fired meanwhile aborts there.
    this.inner.onRequestStart?.(controller, context);
    if (this.#called || controller.aborted) return;
    this.#called = true;
    try {
      this.onWrite();
    } catch (error) {
      controller.abort(new NotWritten(error));
    }
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
