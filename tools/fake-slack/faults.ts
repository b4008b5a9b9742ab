/** Faults a test queues for the next calls of a method (`FakeSlack.failNext`). */

export interface FailOptions {
  /** How many of the next calls fail. Default 1. */
  count?: number;
  /** 500 (an HTTP error), 429 (rate limited) or 200 (`ok: false`). Default 500. */
  status?: 500 | 429 | 200;
  /** The `error` of the answer. Default "internal_error" ("ratelimited" for 429). */
  error?: string;
  /** Retry-After of an injected 429, in seconds. Default 1. */
  retryAfter?: number;
  /**
   * The call takes effect first (a post is stored, an edit applied) and only its answer is
   * the fault: Slack did the work, and the caller cannot know. Default false.
   */
  landed?: boolean;
}

export interface Fault {
  status: 500 | 429 | 200;
  error: string;
  retryAfter: number;
  landed: boolean;
}

interface QueuedFault extends Fault {
  remaining: number;
}

export class FaultQueue {
  private readonly queues = new Map<string, QueuedFault[]>();

  add(method: string, options: FailOptions = {}): void {
    const status = options.status ?? 500;
    const queue = this.queues.get(method) ?? [];
    queue.push({
      remaining: options.count ?? 1,
      status,
      error: options.error ?? (status === 429 ? "ratelimited" : "internal_error"),
      retryAfter: options.retryAfter ?? 1,
      landed: options.landed ?? false,
    });
    this.queues.set(method, queue);
  }

  /** The fault for this call of `method`, if one is queued; it is used up. */
  take(method: string): Fault | undefined {
    const queue = this.queues.get(method);
    const fault = queue?.[0];
    if (queue === undefined || fault === undefined) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) queue.shift();
    const { status, error, retryAfter, landed } = fault;
    return { status, error, retryAfter, landed };
  }

  clear(): void {
    this.queues.clear();
  }
}
