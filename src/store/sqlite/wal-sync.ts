import { type FileHandle, open } from "node:fs/promises";

export interface WalSyncOptions {
  /** How often the log is synced whether or not anyone waits, ms; default 200. */
  everyMs?: number;
  /** How the open log is synced; default its fdatasync (tests count the syncs). */
  sync?: (log: FileHandle) => Promise<void>;
}

/**
 * Brings the SQLite file's log (its WAL) to the disk without holding the event loop. The
 * database commits with `synchronous = NORMAL`: a commit is in the operating system's hands
 * (it survives the process being killed) but not yet on the disk. Whoever needs it to
 * survive a power cut as well (a question before Slack is told it arrived, an attempt before
 * its request leaves) awaits `flush()`: an fdatasync of the log on libuv's thread pool,
 * started at once, which carries every commit made before it began, exactly what
 * `synchronous = FULL` does at every commit, except that the flushes asked together share one
 * (a group commit) and the event loop goes on. A flush asked while another sync runs starts
 * its own rather than waiting for that one to end: each turn of a busy event loop that it
 * would wait for costs the person waiting for Slack's acknowledgement. A timer flushes every
 * `everyMs` too, so that no other write waits in the cache for long.
 */
export class WalSync {
  readonly #path: string;
  readonly #syncFile: (log: FileHandle) => Promise<void>;
  #file: Promise<FileHandle | undefined> | undefined;
  /** The sync that the flushes asked in this turn of the event loop share, not begun yet. */
  #next: Promise<void> | undefined;
  readonly #running = new Set<Promise<void>>();
  readonly #timer: NodeJS.Timeout;

  constructor(databasePath: string, options: WalSyncOptions = {}) {
    const { everyMs = 200, sync = (log) => log.datasync() } = options;
    this.#path = `${databasePath}-wal`;
    this.#syncFile = sync;
    this.#timer = setInterval(() => {
      // A failure here is told to the next caller that awaits a flush.
      this.flush().catch(() => undefined);
    }, everyMs);
    this.#timer.unref();
  }

  /** Resolves once every commit made before the call is on the disk. */
  flush(): Promise<void> {
    this.#next ??= Promise.resolve().then(() => {
      this.#next = undefined;
      const run = this.#sync().finally(() => this.#running.delete(run));
      this.#running.add(run);
      return run;
    });
    return this.#next;
  }

  /** Stops the timer, waits for the syncs under way and lets the log go. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.allSettled([this.#next, ...this.#running]);
    const file = await this.#file?.catch(() => undefined);
    this.#file = undefined;
    await file?.close().catch(() => undefined);
  }

  async #sync(): Promise<void> {
    this.#file ??= open(this.#path, "r+").catch((error: NodeJS.ErrnoException) => {
      // No log yet: nothing was committed to it. Opened again next time.
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    const file = await this.#file.catch((error: unknown) => {
      this.#file = undefined;
      throw error;
    });
    if (file === undefined) {
      this.#file = undefined;
      return;
    }
    await this.#syncFile(file);
  }
}
