import type { ServerResponse } from "node:http";
import { KEEP_ALIVE_FRAME } from "./sse.js";

/**
 * One open `text/event-stream` response: writes whole frames, sends a keep-alive comment
 * every `keepAliveMs`, and, when a test asked for it, drops the connection abruptly (no
 * end event, no final chunk) right after the K-th event.
 */

export interface SseWriterOptions {
  /** Interval of `: keep-alive` comments, in milliseconds. */
  keepAliveMs: number;
  /** Drop the connection after this many events; undefined never drops. */
  dropAfterEvents: number | undefined;
}

export class SseWriter {
  readonly #res: ServerResponse;
  readonly #dropAfter: number | undefined;
  readonly #keepAlive: NodeJS.Timeout;
  readonly #closeListeners = new Set<() => void>();
  #events = 0;
  #closed = false;

  constructor(res: ServerResponse, options: SseWriterOptions) {
    this.#res = res;
    this.#dropAfter = options.dropAfterEvents;
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      // Proxies such as nginx would otherwise buffer the stream.
      "x-accel-buffering": "no",
    });
    res.flushHeaders();
    this.#keepAlive = setInterval(() => this.#write(KEEP_ALIVE_FRAME), options.keepAliveMs);
    res.on("close", () => this.#markClosed());
    if (this.#dropAfter === 0) this.#dropAfterWriting(": dropping\n\n");
  }

  /** False once the connection is closed, ended or dropped. */
  get open(): boolean {
    return !this.#closed;
  }

  /** Called once when the response closes for any reason (client gone, end, drop). */
  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#closeListeners.add(listener);
  }

  /** Writes each frame as one event, dropping the connection when the count is reached. */
  send(frames: readonly string[]): void {
    for (const frame of frames) {
      if (this.#closed) return;
      this.#events += 1;
      if (this.#events === this.#dropAfter) this.#dropAfterWriting(frame);
      else this.#write(frame);
    }
  }

  /** Ends the response normally. */
  end(): void {
    if (this.#closed) return;
    this.#res.end();
    this.#markClosed();
  }

  /** Destroys the connection (used by the drop fault and when the simulator closes). */
  destroy(): void {
    if (this.#closed) return;
    this.#res.destroy();
    this.#markClosed();
  }

  #write(frame: string): void {
    if (!this.#closed) this.#res.write(frame);
  }

  /**
   * Destroying a socket cancels writes still queued, so the connection is cut only once
   * this last frame has been handed to the OS; no final chunk is ever written.
   */
  #dropAfterWriting(frame: string): void {
    this.#markClosed();
    this.#res.write(frame, () => this.#res.destroy());
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepAlive);
    for (const listener of this.#closeListeners) listener();
    this.#closeListeners.clear();
  }
}
