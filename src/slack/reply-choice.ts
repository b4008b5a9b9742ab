import type {
  ReplyRecorder,
  ReplyRenderer,
  ReplyStrategy,
  ReplyTarget,
  ReplyView,
} from "../bridge/ports.js";
import type { Clock } from "../time.js";
import type { NativeStream } from "./native-stream.js";
import { SlidingWindow } from "./sliding-window.js";
import { START, STOP } from "./stream-gate.js";

type Way = "stream" | "edits";

/** What the choice reads of the scheduler: how long a method's next call would wait, ms. */
export interface Budgets {
  waitFor(team: string, method: string): number;
}

export interface ReplyChoiceOptions {
  /** Paced `chat.update` edits: every reply that does not stream, and every reply's end. */
  edits: ReplyStrategy;
  /** Native streaming; undefined: every reply is edited (SLACK_STREAMING=off). */
  native: NativeStream | undefined;
  budgets: Budgets;
  /** The `chat.update` calls a minute the pacer spends (SLACK_UPDATES_PER_MINUTE). */
  updatesPerMinute: number;
  /** The `chat.appendStream` calls a minute the stream gate spends. */
  appendsPerMinute: number;
  /**
   * The streams the stream gate may start in any minute (SLACK_STREAM_STARTS_PER_MINUTE), and
   * the clock to count them by: a stream is counted when it is chosen, since its start may wait
   * a moment for the first words and spend the budget only then. Without them, only the
   * budgets are read.
   */
  starts?: { perMinute: number; clock: Clock };
  /**
   * Longest wait for `chat.startStream` (and `chat.stopStream`) budget that still streams,
   * ms; default 1_000: past it the placeholder would not appear at once.
   */
  maxStartWaitMs?: number;
  /** Told which way each answer goes (metrics, logs). */
  onChosen?: (target: ReplyTarget, way: Way) => void;
}

/**
 * The reply strategy the bridge is given: per answer, native streaming or paced edits,
 * whichever the workspace's budgets serve best at the moment the answer opens.
 *
 * An answer streams when Slack lets the bot stream there, its start and stop can go now (Tier
 * 2), and the appends it would share (Tier 4) give it more updates a minute than the edits it
 * would share (Tier 3), counting the answers already going each way in that workspace. So
 * streams take the first answers of a burst, edits the next, and both budgets carry the
 * load. A reply waiting behind another in its thread is edited (its placeholder may wait for
 * long: a stream would expire), and so is a reply resumed after a restart.
 */
export class ReplyChoice implements ReplyStrategy {
  private readonly going = new Map<string, { stream: number; edits: number }>();
  /** Workspaces, and channels (`team/channel`), where Slack refused to stream. */
  private readonly refused = new Set<string>();
  /** Per workspace, the streams chosen within the last minute. */
  private readonly chosen = new Map<string, SlidingWindow>();

  constructor(private readonly options: ReplyChoiceOptions) {}

  render(target: ReplyTarget, recorder: ReplyRecorder): ReplyRenderer {
    return new ChosenReply(target, recorder, this);
  }

  /** Slack refused a stream: not in this channel again, or (a missing method or scope) anywhere in the workspace. */
  refuse(target: ReplyTarget, reason: string): void {
    const where = reason === "channel_type_not_supported" ? target.channel : "";
    this.refused.add(`${target.team}/${where}`);
  }

  /** The way of a reply about to show `view` (undefined: it ends without having opened). */
  async choose(target: ReplyTarget, recorder: ReplyRecorder, view: ReplyView | undefined) {
    const { native, edits } = this.options;
    const resumed = target.parts.length > 0 || (target.postsAttempted ?? 0) > 0;
    const way: Way = native && view && !resumed && this.streams(target, view) ? "stream" : "edits";
    const going = this.going.get(target.team) ?? { stream: 0, edits: 0 };
    this.going.set(target.team, going);
    going[way]++;
    this.options.onChosen?.(target, way);
    const renderer =
      way === "stream"
        ? (native as NativeStream).render(target, recorder)
        : native && resumed
          ? await native.resume(target, recorder)
          : edits.render(target, recorder);
    return { renderer, done: () => going[way]-- };
  }

  private streams(target: ReplyTarget, view: ReplyView): boolean {
    const { team, channel } = target;
    if (!target.asker || view.phase.kind === "queued") return false;
    if (this.refused.has(`${team}/`) || this.refused.has(`${team}/${channel}`)) return false;
    const { budgets, maxStartWaitMs = 1_000 } = this.options;
    if (budgets.waitFor(team, START) > maxStartWaitMs) return false;
    if (budgets.waitFor(team, STOP) > maxStartWaitMs) return false;
    const going = this.going.get(team) ?? { stream: 0, edits: 0 };
    const streamShare = this.options.appendsPerMinute / (going.stream + 1);
    const editShare = this.options.updatesPerMinute / (going.edits + 1);
    return streamShare >= editShare && this.reserveStart(team);
  }

  /** Counts a stream's start against the minute's, when it still has room. */
  private reserveStart(team: string): boolean {
    const { starts } = this.options;
    if (!starts) return true;
    let window = this.chosen.get(team);
    if (!window) {
      window = new SlidingWindow(starts.perMinute);
      this.chosen.set(team, window);
    }
    return window.tryTake(starts.clock.now());
  }
}

/** One answer's reply: the way is chosen when it first shows something, then kept. */
class ChosenReply implements ReplyRenderer {
  private chosen: ReturnType<ReplyChoice["choose"]> | undefined;

  constructor(
    private readonly target: ReplyTarget,
    private readonly recorder: ReplyRecorder,
    private readonly choice: ReplyChoice,
  ) {}

  async open(view: ReplyView): Promise<void> {
    await (await this.way(view)).renderer.open(view);
  }

  show(view: ReplyView): void {
    void this.way(view).then(({ renderer }) => renderer.show(view));
  }

  async finish(view: ReplyView): Promise<void> {
    const { renderer, done } = await this.way(undefined);
    try {
      await renderer.finish(view);
    } finally {
      done();
    }
  }

  private way(view: ReplyView | undefined): ReturnType<ReplyChoice["choose"]> {
    this.chosen ??= this.choice.choose(this.target, this.recorder, view);
    return this.chosen;
  }
}
