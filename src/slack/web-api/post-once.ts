import type { Nearing, PostGate, PostTarget } from "../calls/post-gate.js";
import { classifyCallFailure, NOT_SENT_CODE } from "./call-failure.js";

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
  /**
   * The attempt being recorded (the turn store), which must land before the message is sent:
   * the post waits its turn in the gate meanwhile, so the record's round trip and the
   * budgets' are not one after the other. A record that fails fails the post with its error,
   * and nothing is sent.
   */
  recorded?: Promise<unknown>;
}

class NotSent extends Error {
  readonly code = NOT_SENT_CODE;

  constructor(cause: unknown) {
    super("the post was not sent: its attempt could not be recorded", { cause });
  }
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
  const { recorded } = options;
  const gated = options.postGate.post(
    target,
    async (attempt) => {
      if (recorded) await recorded.catch((error: unknown) => Promise.reject(new NotSent(error)));
      if (attempt > 1 || options.mayExist) {
        const ts = await lookFirst(options);
        if (ts !== undefined) return { ts, found: true };
      }
      return { ts: (await options.post()).ts, found: false };
    },
    undefined,
    options.nearing,
  );
  if (!recorded) return gated;
  // A record that failed is the post's failure; the gate's attempt then only gives up.
  gated.catch(() => undefined);
  return recorded.then(() => gated);
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
