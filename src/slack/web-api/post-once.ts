import type { Nearing, PostGate, PostTarget } from "../calls/post-gate.js";
import { classifyCallFailure } from "./call-failure.js";

export interface PostOnceOptions {
  /** The gate the post waits in; its retries are the only ones a post gets. */
  postGate: PostGate;
  /** Sends the (marked) message: `chat.postMessage`, resolving with its ts. */
  post: () => Promise<{ ts: string }>;
  /** Looks for the message by its mark in the thread; undefined when it is not there. */
  find: () => Promise<string | undefined>;
  /**
   * A post of this message was sent before the first attempt here (by an earlier process):
   * even the first attempt looks first. Default false.
   */
  mayExist?: boolean;
  /** Told when Slack refused the lookup itself, so the post went ahead without it. */
  onLookupRefused?: (error: unknown) => void;
  /** Told when the post comes near the head of its channel's queue (PostGate.post). */
  nearing?: Nearing;
}

/**
 * One post of a message, never two: every attempt after the first (and the first, when an
 * earlier process may have sent it) looks in the thread for the message's mark before it
 * posts, so a post that Slack took but answered with a 500, or whose answer was lost, is
 * found rather than posted again. `found` says the message was already there (its content
 * is whatever was posted then).
 */
export function postOnce(
  target: PostTarget,
  options: PostOnceOptions,
): Promise<{ ts: string; found: boolean }> {
  return options.postGate.post(
    target,
    async (attempt) => {
      if (attempt > 1 || options.mayExist) {
        const ts = await lookFirst(options);
        if (ts !== undefined) return { ts, found: true };
      }
      return { ts: (await options.post()).ts, found: false };
    },
    undefined,
    options.nearing,
  );
}

async function lookFirst(options: PostOnceOptions): Promise<string | undefined> {
  try {
    return await options.find();
  } catch (error) {
    // Slack busy or unreachable: this attempt fails, and the gate's next one looks again.
    if (classifyCallFailure(error).kind !== "permanent") throw error;
    // Slack refuses the lookup itself (a missing scope, say): a message shown twice is
    // better than one never shown.
    options.onLookupRefused?.(error);
    return undefined;
  }
}
