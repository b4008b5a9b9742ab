import type {
  ReplyRecorder,
  ReplyRenderer,
  ReplyStrategy,
  ReplyTarget,
} from "../../bridge/ports.js";
import { type NativeStreamOptions, StreamReply, stopQuietly } from "./stream-reply.js";

export type { NativeStreamOptions, UnmarkedQuery } from "./stream-reply.js";

/**
 * The second reply strategy: each answer streamed natively (`chat.startStream`,
 * `chat.appendStream`, `chat.stopStream`) into as many messages as its size needs, with its
 * steps as task cards and the Stop button. A completed answer in one message ends with the
 * stop that carries its last words; any other ends with the paced edits' final edits, which
 * make every message exact, drop the Stop button and add the status line. A reply that cannot
 * stream on (Slack refused, a failure whose outcome is unknown, the text changed) goes on as
 * paced edits in the same messages.
 */
export class NativeStream implements ReplyStrategy {
  private readonly live = new Set<StreamReply>();

  constructor(private readonly options: NativeStreamOptions) {}

  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer {
    const reply = new StreamReply(target, recorder, this.options, () => this.live.delete(reply));
    this.live.add(reply);
    return reply;
  }

  /**
   * A reply resumed after a restart, as paced edits: what its streams showed is not known.
   * A part whose start may have reached Slack unrecorded is looked for, and the last part's
   * stream is stopped (and marked) so that it can be edited.
   */
  async resume(target: ReplyTarget, recorder: ReplyRecorder): Promise<ReplyRenderer> {
    const { team, channel, threadTs, turnId } = target;
    const parts = [...target.parts];
    if ((target.postsAttempted ?? parts.length) > parts.length) {
      const after = parts.at(-1) ?? target.askedTs ?? threadTs;
      const found = await this.options
        .findUnmarked({ team, channel, threadTs, after })
        .catch(() => {
          return undefined;
        });
      if (found !== undefined) {
        parts.push(found);
        await recorder.parts([...parts]);
      }
    }
    const last = parts.at(-1);
    if (last !== undefined) {
      await stopQuietly(this.options, target, last, parts.length - 1).catch((error: unknown) => {
        this.options.onError?.(error, `stop the stream of ${turnId}`);
      });
    }
    return this.options.edits.render({ ...target, parts }, recorder);
  }

  /** Cancels the renewal timers of replies still streaming (the bot is stopping). */
  close(): void {
    for (const reply of this.live) reply.close();
    this.live.clear();
  }
}
