import type { ReplyView } from "../../bridge/ports.js";
import type { Clock } from "../../time.js";
import { streamableEnd } from "../render/stream-layout.js";

const READABLE = /[\p{L}\p{N}]/u;

/**
 * A reply with nothing to read yet and nothing else to say: it is starting or working, shows
 * no step, and its text has no whole word that a growing answer could show (the word being
 * written waits: stream-layout.ts), so that its first message never shows a fragment alone.
 */
export function wordless(view: ReplyView): boolean {
  const { kind } = view.phase;
  if (kind !== "starting" && kind !== "working") return false;
  if ((view.steps?.length ?? 0) > 0) return false;
  return !READABLE.test(view.body.slice(0, streamableEnd(view.body, 0)));
}

/**
 * The wait of a reply's first message for the answer's first words, so that they ride on the
 * message that is posted or the stream that is started instead of costing a change from the
 * workspace's shared budget. Where Slack's status line says the assistant is working, a
 * short wait shows nothing less. It ends when the words come (`seen`), the reply has more to
 * say, `end` is called, or after `waitMs`.
 */
export class FirstWords {
  private done: (() => void) | undefined;

  constructor(
    private readonly clock: Clock | undefined,
    private readonly waitMs: number,
  ) {}

  /** Resolves at once for a view that is not wordless, or without a clock or a wait. */
  wait(view: ReplyView): Promise<void> {
    if (this.waitMs <= 0 || !this.clock || !wordless(view)) return Promise.resolve();
    const clock = this.clock;
    return new Promise<void>((resolve) => {
      const cancel = clock.timer(this.waitMs, () => this.end());
      this.done = () => {
        cancel();
        resolve();
      };
    });
  }

  /** The reply was given `view`: the wait ends when it has something to show. */
  seen(view: ReplyView): void {
    // Read only during the wait: every view of the answer is given here.
    if (this.done && !wordless(view)) this.end();
  }

  end(): void {
    const done = this.done;
    this.done = undefined;
    done?.();
  }
}
