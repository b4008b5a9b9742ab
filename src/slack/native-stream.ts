import type { ReplyRecorder, ReplyRenderer, ReplyStrategy, ReplyTarget } from "../bridge/ports.js";
import { type NativeStreamOptions, StreamReply, stopQuietly } from "./stream-reply.js";

export type { NativeStreamOptions, UnmarkedQuery } from "./stream-reply.js";

/** An answer alone is appended to up to four times a second, ms. */
const FASTEST_APPEND_MS = 250;
/** However many answers stream, each is appended to at least once a second, ms. */
const SLOWEST_APPEND_MS = 1_000;
/** Each answer streaming beside it adds this much to an answer's time between appends, ms. */
const APPEND_MS_PER_STREAM = 100;

/**
 * How long an answer waits between two appends while `streaming` answers share the
 * workspace's appends. A person misses words more than the budget misses calls: ten answers
 * written in eight seconds, each appended to once a second, spend 80 of the minute's 95, which
 * is the burst Slack welcomes for Tier 4; fewer go faster; more keep to once a second and
 * share the rest of the window by who waited longest (the stream gate).
 */
export function appendInterval(streaming: number): number {
  return Math.min(SLOWEST_APPEND_MS, Math.max(FASTEST_APPEND_MS, streaming * APPEND_MS_PER_STREAM));
}

/**
 * The second reply strategy: each answer streamed natively (`chat.startStream`,
 * `chat.appendStream`, `chat.stopStream`) into as many messages as its size needs, with its
 * steps as task cards and the Stop button, and ended by the paced edits' final edits, which
 * make every message exact, drop the Stop button and add the status line. A reply that cannot
 * stream on (Slack refused, a failure whose outcome is unknown, the text changed) goes on as
 * paced edits in the same messages.
 */
export class NativeStream implements ReplyStrategy {
  private readonly live = new Set<StreamReply>();
  private readonly replyOptions: NativeStreamOptions;

  constructor(private readonly options: NativeStreamOptions) {
    this.replyOptions = {
      appendIntervalMs: (team) => appendInterval(this.streaming(team)),
      ...options,
    };
  }

  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer {
    const reply = new StreamReply(target, recorder, this.replyOptions, () =>
      this.live.delete(reply),
    );
    this.live.add(reply);
    return reply;
  }

  /** The answers streaming in workspace `team` now. */
  private streaming(team: string): number {
    let n = 0;
    for (const reply of this.live) if (reply.target.team === team) n++;
    return n;
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
        recorder.parts([...parts]);
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
