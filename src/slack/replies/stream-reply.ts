import type { ReplyRecorder, ReplyRenderer, ReplyTarget, ReplyView } from "../../bridge/ports.js";
import type { Clock } from "../../time.js";
import { PostGateError } from "../calls/post-gate.js";
import type { StreamGate } from "../calls/stream-gate.js";
import { splitFinal } from "../render/answer-split.js";
import { blocksUnderStream } from "../render/reply-blocks.js";
import {
  continuation,
  DEFAULT_STREAM_LIMITS,
  type StreamLimits,
  type StreamPart,
} from "../render/stream-layout.js";
import { closingTable } from "../render/table-block.js";
import { classifyCallFailure } from "../web-api/call-failure.js";
import { replyMark } from "../web-api/message-mark.js";
import { postOnce } from "../web-api/post-once.js";
import type { SlackWebApi } from "../web-api/web-api.js";
import { FirstWords } from "./first-words.js";
import type { PacedEdits } from "./reply.js";
import type { Card } from "./stream-chunks.js";
import { Diverged, type Plan, type PlannedPart, planStream } from "./stream-plan.js";

/** Where to look for a stream whose start Slack may have taken without the bot learning its ts. */
export interface UnmarkedQuery {
  /** The workspace: the look-up carries its bot token. */
  team: string;
  channel: string;
  threadTs: string;
  /** The message it follows (the previous part, or the question). */
  after: string;
}

export interface NativeStreamOptions {
  /** The Web API of a workspace (its calls carry that workspace's bot token). */
  slack: (team: string) => Pick<SlackWebApi, "startStream" | "appendStream" | "stopStream">;
  gate: StreamGate;
  /**
   * How a reply goes on once it stops streaming, and how a reply ends that a stream cannot end
   * (a stop, a failure, more text than its message holds): paced edits. `tidy` gives a
   * streamed answer its final layout once it is whole, when no answer waits for the budget.
   */
  edits: Pick<PacedEdits, "render" | "tidy">;
  clock: Clock;
  /** Where streamed messages are cut; default DEFAULT_STREAM_LIMITS. */
  limits?: StreamLimits;
  /**
   * How long a stream that would start with nothing to read waits for the first words, so
   * that they ride on its start, ms; default 0 (first-words.ts).
   */
  firstWordsWaitMs?: number;
  /**
   * A stream given nothing for this long gets its status card again, so that Slack does not
   * end it (reported: about five minutes after the last append), ms; default 240_000.
   */
  renewAfterMs?: number;
  /**
   * The bot's first message after `after` in the thread that carries no mark: a stream
   * cannot carry one until it stops, so a start whose answer was lost is found this way.
   */
  findUnmarked: (where: UnmarkedQuery) => Promise<string | undefined>;
  /** The person stopped the stream in Slack (`stopped_by_user`): the turn should stop. */
  onStoppedByUser?: (target: ReplyTarget) => void;
  /** Slack refused to stream here for good (`channel_type_not_supported`, a missing scope…). */
  onRefused?: (target: ReplyTarget, reason: string) => void;
  onError?: (error: unknown, what: string) => void;
}

/** The tail stays held back while the text grew this recently, ms: about one append's time. */
const TAIL_WAIT_MS = 1_000;

/** Slack's answers that mean the stream cannot take more, though a new one can. */
const ENDED = new Set(["message_not_in_streaming_state", "msg_too_long"]);

export function reasonOf(error: unknown): string {
  if (error instanceof Diverged) return "diverged";
  const failure = classifyCallFailure(error);
  return failure.kind === "permanent" ? failure.reason : failure.kind;
}

/** `chat.stopStream` with the part's mark; resolves with Slack's reason when it refused. */
export async function stopQuietly(
  options: NativeStreamOptions,
  target: ReplyTarget,
  ts: string,
  index: number,
): Promise<string | undefined> {
  const { team, channel, turnId } = target;
  try {
    await options.gate.stops.post({ team, channel, lane: ts }, () =>
      options.slack(team).stopStream({ channel, ts, metadata: replyMark(turnId, index) }),
    );
    return undefined;
  } catch (error) {
    const reason = reasonOf(error);
    // Already ended (expired, stopped before): the final edit shows what it must anyway.
    if (reason !== "message_not_in_streaming_state" && reason !== "stopped_by_user") throw error;
    return reason;
  }
}

/** A stream being written: its part of the answer, its message and the cards it shows. */
interface Stream extends StreamPart {
  ts: string;
  index: number;
  cards: Map<string, Card>;
  /** Stopped (or ended by Slack): nothing more is sent to it. */
  ended?: boolean;
}

/**
 * One answer streamed natively (`chat.startStream`, `chat.appendStream`, `chat.stopStream`):
 * one serialized loop sends the newest words and cards, rolls over to a new message when one
 * is full or Slack ended it, renews an idle stream, and hands the reply over to paced edits
 * when it cannot stream on, and always for the end.
 */
export class StreamReply implements ReplyRenderer {
  private readonly parts: string[] = [];
  private readonly limits: StreamLimits;
  private stream: Stream | undefined;
  private latest: ReplyView = { body: "", phase: { kind: "starting" }, notes: [] };
  /** The answer's text streamed so far, over every part. */
  private streamed = "";
  /** Words are flowing: the status card is done with. */
  private writing = false;
  /** Nothing was appended for `renewAfterMs`: something harmless goes next. */
  private keepAlive = false;
  private rollTo: { start: number; reopen: string } | undefined;
  /** New streams begun in a row without a word written: a stream that keeps ending. */
  private stalls = 0;
  private userStopped = false;
  private renewal: (() => void) | undefined;
  /** When the text grew last: while it grows, its last character waits (stream-layout.ts). */
  private grewAt = Number.NEGATIVE_INFINITY;
  /** The wake-up that lets a held tail go once the text pauses. */
  private wake: (() => void) | undefined;
  /** Withdraws the append waiting for the workspace's budget, before it goes. */
  private waitingAppend: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private dirty = false;
  private closing = false;
  private edits: Promise<ReplyRenderer> | undefined;
  private readonly firstWords: FirstWords;

  constructor(
    private readonly target: ReplyTarget,
    private readonly recorder: ReplyRecorder,
    private readonly options: NativeStreamOptions,
    private readonly done: () => void,
  ) {
    this.limits = options.limits ?? DEFAULT_STREAM_LIMITS;
    this.firstWords = new FirstWords(options.clock, options.firstWordsWaitMs ?? 0);
  }

  async open(view: ReplyView): Promise<void> {
    this.latest = view;
    this.grewAt = this.options.clock.now();
    // The start goes once the first words are written: its budget is taken meanwhile.
    this.options.gate.starts.expect({ team: this.target.team, channel: this.target.channel });
    await this.firstWords.wait(view);
    try {
      await this.begin({ start: 0, reopen: "" });
    } catch (error) {
      this.failed(error, "start a stream");
    }
    if (this.edits) return (await this.edits).open(this.latest);
    this.kick();
  }

  show(view: ReplyView): void {
    if (view.body !== this.latest.body) this.grewAt = this.options.clock.now();
    this.latest = view;
    this.firstWords.seen(view);
    if (this.edits) void this.edits.then((edits) => edits.show(view));
    else this.kick();
  }

  async finish(view: ReplyView): Promise<void> {
    this.latest = view;
    this.closing = true;
    this.firstWords.end();
    // An append still waiting for the workspace's budget would hold the end back: the end
    // carries its words instead.
    this.waitingAppend?.abort();
    await this.loop;
    if (await this.endWithWords(view)) {
      this.done();
      // Slack shows the answer whole; the edit that takes the Stop button away waits for the
      // edits' budget to have nothing more pressing. The turn ends once it landed, so that a
      // bot killed before it leaves the turn to be resumed, and the resumed reply ends it.
      const target = { ...this.target, parts: [...this.parts], postsAttempted: this.parts.length };
      await this.options.edits.tidy(target, this.recorder, view).catch((error: unknown) => {
        this.options.onError?.(error, "tidy a streamed answer");
      });
      return;
    }
    const edits = await this.handOver();
    this.done();
    await edits.finish(view);
  }

  /**
   * Ends a completed answer's one stream with its last words and the blocks that go under it,
   * so that Slack shows the answer whole in one call; false when the stream cannot end it (a
   * stop or a failure, whose sentence the edits show; an answer in more than one message, or
   * one its message cannot hold; a text that changed under the stream; a stop that failed),
   * and the edits end it instead.
   */
  private async endWithWords(view: ReplyView): Promise<boolean> {
    const stream = this.stream;
    if (view.phase.kind !== "completed" || !stream || stream.ended || this.edits) return false;
    // An answer without words ends with a sentence saying so, which only the edits show.
    if (view.body.trim() === "") return false;
    // A long answer's messages are laid out again by the final edits (answer-split.ts).
    if (this.userStopped || this.rollTo || stream.index > 0) return false;
    // So is one with a table that Slack shows as a table block: a stream shows Markdown only,
    // its pipes included, and the edit that makes it a table changes what a person reads, so it
    // is a final edit (ranked first), not the tidy one (ranked last).
    if (splitFinal(view.body).some((part) => closingTable(part) !== undefined)) return false;
    let plan: Plan | undefined;
    try {
      plan = planStream({
        // As a stream that is writing: a status card still shown is marked done, none is added.
        view: { ...view, phase: { kind: "working" } },
        part: stream,
        streamed: this.streamed,
        limits: this.limits,
        turnId: this.target.turnId,
        starting: false,
        writing: true,
        keepAlive: false,
        holdTail: false,
      });
    } catch {
      return false;
    }
    if (plan?.text.next) return false;
    this.disarm();
    const { team, channel, turnId } = this.target;
    const blocks = blocksUnderStream({
      phase: view.phase,
      turnId,
      notes: view.notes,
      part: { index: stream.index },
    });
    try {
      await this.options.gate.stops.post({ team, channel, lane: stream.ts }, () =>
        this.options.slack(team).stopStream({
          channel,
          ts: stream.ts,
          metadata: replyMark(turnId, stream.index),
          ...(plan && plan.chunks.length > 0 && { chunks: plan.chunks }),
          ...(blocks.length > 0 && { blocks }),
        }),
      );
    } catch (error) {
      this.options.onError?.(error, "end a stream with its last words");
      return false;
    }
    stream.ended = true;
    return true;
  }

  close(): void {
    this.closing = true;
    this.firstWords.end();
    this.disarm();
  }

  private kick(): void {
    this.dirty = true;
    // Without a stream there is nothing to append to yet: the start takes the latest view.
    if (this.loop || this.edits || this.closing || !this.stream) return;
    this.loop = this.run().finally(() => {
      this.loop = undefined;
      if (this.dirty) this.kick();
    });
  }

  private async run(): Promise<void> {
    while (this.dirty && !this.edits && !this.closing && this.stream) {
      this.dirty = false;
      const stream = this.stream;
      try {
        const next = this.rollTo;
        this.rollTo = undefined;
        if (next) await this.roll(stream, next);
        else await this.append(stream);
      } catch (error) {
        // An append withdrawn while it waited for the budget: the end carries its words.
        if (error instanceof PostGateError && error.reason === "withdrawn") continue;
        this.failed(error, "stream the answer", stream);
      }
    }
  }

  private async append(stream: Stream): Promise<void> {
    const { team, channel } = this.target;
    if (!this.plan(stream, false)) return;
    const waiting = new AbortController();
    this.waitingAppend = waiting;
    const post = this.options.gate.appends.post(
      { team, channel, lane: stream.ts },
      () => this.sendAppend(stream),
      waiting.signal,
    );
    await post.finally(() => {
      if (this.waitingAppend === waiting) this.waitingAppend = undefined;
    });
  }

  /** One append, made when the workspace's budget lets it go. */
  private async sendAppend(stream: Stream): Promise<void> {
    const { team, channel } = this.target;
    this.waitingAppend = undefined;
    // Made when the call goes: the newest text, never a queue of stale ones.
    const keptAlive = this.keepAlive;
    const plan = this.edits ? undefined : this.plan(stream, false);
    if (!plan) return;
    if (plan.chunks.length > 0) {
      // Slack's idle time runs from when it got the append: the renewal is timed from here.
      this.arm();
      await this.options.slack(team).appendStream({ channel, ts: stream.ts, chunks: plan.chunks });
    }
    this.commit(stream, plan, keptAlive);
  }

  /** Ends `stream` (marked) and begins the next message where the answer goes on. */
  private async roll(stream: Stream, next: { start: number; reopen: string }): Promise<void> {
    this.disarm();
    if (!stream.ended) {
      stream.ended = true;
      const reason = await stopQuietly(this.options, this.target, stream.ts, stream.index);
      if (reason === "stopped_by_user") return this.stoppedByUser();
    }
    if (++this.stalls > 3) throw new Error("Slack keeps ending the reply's streams");
    if (!this.latest.body.startsWith(this.streamed)) throw new Diverged();
    await this.begin(next);
  }

  /** Starts the next part's stream, its first text made when the start goes. */
  private async begin(at: { start: number; reopen: string }): Promise<void> {
    const { team, channel, threadTs, asker } = this.target;
    const index = this.parts.length;
    const draft = { ...at, sent: 0, cards: new Map<string, Card>() };
    const after = this.parts.at(-1) ?? this.target.askedTs ?? threadTs;
    const find = () => this.options.findUnmarked({ team, channel, threadTs, after });
    let built: Plan | undefined;
    let ts: string;
    try {
      ({ ts } = await postOnce(
        { team, channel },
        {
          postGate: this.options.gate.starts,
          recorded: this.recorder.posting(index),
          post: () => {
            built = this.plan(draft, true) as Plan;
            this.arm();
            return this.options.slack(team).startStream({
              channel,
              thread_ts: threadTs,
              recipient_user_id: asker ?? "",
              recipient_team_id: team,
              chunks: built.chunks,
            });
          },
          find,
        },
      ));
    } catch (error) {
      const reason = reasonOf(error);
      if (classifyCallFailure(error).kind === "permanent")
        this.options.onRefused?.(this.target, reason);
      // Slack may have taken a start whose answer was lost: that message is this part.
      const found =
        built && reason === "transient" ? await find().catch(() => undefined) : undefined;
      if (found === undefined) throw error;
      ts = found;
    }
    this.parts.push(ts);
    await this.recorder.parts([...this.parts]);
    const stream: Stream = { ...draft, ts, index };
    this.stream = stream;
    this.commit(stream, built as Plan, true);
  }

  /** What to send now to `part`, made from the latest view. */
  private plan(part: PlannedPart, starting: boolean): Plan | undefined {
    return planStream({
      view: this.latest,
      part,
      streamed: this.streamed,
      limits: this.limits,
      turnId: this.target.turnId,
      starting,
      writing: this.writing,
      keepAlive: this.keepAlive,
      holdTail: this.growing(),
    });
  }

  /**
   * Whether the text grew within the last TAIL_WAIT_MS. When it did, a wake-up is set for
   * the moment it no longer counts as growing, so that a tail held back then goes out.
   */
  private growing(): boolean {
    const left = this.grewAt + TAIL_WAIT_MS - this.options.clock.now();
    if (left <= 0) return false;
    this.wake ??= this.options.clock.timer(left, () => {
      this.wake = undefined;
      this.kick();
    });
    return true;
  }

  /**
   * Records what `plan` sent. `keptAlive`: the plan was made with the renewal's keep-alive
   * owed (or starts a stream), which it has now paid; a renewal that came due while this call
   * was on its way is still owed.
   */
  private commit(stream: Stream, plan: Plan, keptAlive: boolean): void {
    stream.sent = plan.text.sent;
    stream.cards = plan.cards;
    this.streamed = plan.body.slice(0, stream.start + stream.sent);
    if (plan.wrote) {
      this.writing = true;
      this.stalls = 0;
    }
    if (keptAlive) this.keepAlive = false;
    if (plan.text.next) {
      this.rollTo = plan.text.next;
      this.dirty = true;
    }
  }

  private arm(): void {
    this.renewal?.();
    this.renewal = this.options.clock.timer(this.options.renewAfterMs ?? 240_000, () => {
      this.renewal = undefined;
      this.keepAlive = true;
      this.writing = false;
      this.kick();
    });
  }

  private disarm(): void {
    this.renewal?.();
    this.renewal = undefined;
    this.wake?.();
    this.wake = undefined;
  }

  private failed(error: unknown, what: string, stream?: Stream): void {
    if (this.edits) return;
    const reason = reasonOf(error);
    if (reason === "stopped_by_user") {
      this.stoppedByUser();
      return;
    }
    if (stream && ENDED.has(reason)) {
      // This message can take no more: the answer goes on in a new one.
      this.rollTo = continuation(this.streamed, stream);
      this.dirty = true;
      return;
    }
    this.options.onError?.(error, what);
    this.goOnAsEdits();
  }

  private stoppedByUser(): void {
    if (this.userStopped) return;
    this.userStopped = true;
    this.stream = undefined;
    this.options.onStoppedByUser?.(this.target);
    this.goOnAsEdits();
  }

  /** Hands over mid-answer: the edits show the latest view in the messages streamed so far. */
  private goOnAsEdits(): void {
    const streamed = this.parts.length > 0;
    void this.handOver().then((edits) => {
      // Before any message exists, `open` has the edits post the placeholder.
      if (streamed && !this.closing) edits.show(this.latest);
    });
  }

  /** From now on the reply is paced edits in its messages; a stream still open is stopped first. */
  private handOver(): Promise<ReplyRenderer> {
    this.edits ??= (async () => {
      this.disarm();
      const stream = this.stream;
      this.stream = undefined;
      if (stream && !stream.ended && !this.userStopped) {
        await stopQuietly(this.options, this.target, stream.ts, stream.index).catch((error) => {
          this.options.onError?.(error, "stop a stream");
        });
      }
      const parts = [...this.parts];
      return this.options.edits.render(
        { ...this.target, parts, postsAttempted: parts.length },
        this.recorder,
      );
    })();
    return this.edits;
  }
}
