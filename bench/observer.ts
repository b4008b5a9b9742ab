import type { FakeSlack, RecordedCall } from "../src/devtools/fake-slack/server.js";
import type { RunningSimulator, SimulatorRun } from "../src/simulator/server.js";
import type { Writing } from "./stats.js";

/**
 * Watches one scenario from outside the bot: the simulator's runs (when each began writing,
 * when it ended, what it wrote) and the text each Slack thread shows over time.
 */

/** A conversation as the observer follows it. */
export interface Watched {
  index: number;
  channel: string;
  /** The thread: the ts of the person's message. */
  threadTs: string;
  /** What the service receives as the message content ("question <index>: …"). */
  question: string;
}

export interface RunTimeline {
  runId: string;
  threadId: string;
  /** The conversation whose question started the run, when recognised. */
  conversation?: number;
  /** When the run began writing (status in_progress), ms. */
  inProgressAt?: number;
  endedAt?: number;
  status?: string;
  output?: string;
}

export interface Sample {
  at: number;
  /** Characters of answer Markdown visible in the thread's replies. */
  visible: number;
}

/** Characters of answer Markdown that a Slack message shows (its `markdown` blocks). */
export function markdownChars(blocks: unknown): number {
  if (!Array.isArray(blocks)) return 0;
  let chars = 0;
  for (const block of blocks) {
    const b = block as { type?: unknown; text?: unknown };
    if (b.type === "markdown" && typeof b.text === "string") chars += b.text.length;
  }
  return chars;
}

function hasStopButton(blocks: unknown): boolean {
  return JSON.stringify(blocks ?? []).includes('"stop_run"');
}

export class Observer {
  readonly runs = new Map<string, RunTimeline>();
  /** The latest run of each conversation. */
  private readonly byConversation = new Map<number, RunTimeline>();
  readonly samples = new Map<number, Sample[]>();
  /** When each conversation first showed its whole final reply (no Stop button left), ms. */
  readonly settledAt = new Map<number, number>();
  private readonly watched: Watched[] = [];
  private readonly offs: (() => void)[] = [];

  constructor(
    sim: RunningSimulator,
    private readonly slack: FakeSlack,
    private readonly now: () => number = Date.now,
  ) {
    const events = sim.control.events;
    const onStarted = (run: SimulatorRun) => {
      const timeline: RunTimeline = { runId: run.id, threadId: run.threadId };
      // The message a run starts on is already in the thread: its question names the conversation.
      const trigger = sim.control.messages(run.threadId).find((m) => m.id === run.triggerMessageId);
      const index = /question (\d+):/.exec(trigger?.content ?? "")?.[1];
      if (index !== undefined) {
        timeline.conversation = Number(index);
        this.byConversation.set(Number(index), timeline);
      }
      this.runs.set(run.id, timeline);
    };
    const onStatus = (run: SimulatorRun) => {
      const timeline = this.runs.get(run.id);
      if (timeline && run.status === "in_progress") timeline.inProgressAt ??= this.now();
    };
    const onEnded = (run: SimulatorRun) => {
      const timeline = this.runs.get(run.id);
      if (!timeline) return;
      timeline.endedAt = this.now();
      timeline.status = run.status;
      const text = run.output?.[0]?.text;
      if (text !== undefined) timeline.output = text;
    };
    events.on("run-started", onStarted);
    events.on("run-status", onStatus);
    events.on("run-ended", onEnded);
    this.offs.push(
      () => events.off("run-started", onStarted),
      () => events.off("run-status", onStatus),
      () => events.off("run-ended", onEnded),
    );
  }

  watch(conversation: Watched): void {
    this.watched.push(conversation);
    this.samples.set(conversation.index, []);
  }

  watchedConversations(): readonly Watched[] {
    return this.watched;
  }

  /** The run of a conversation, matched through the message the run was started on. */
  runOf(conversation: Watched): RunTimeline | undefined {
    return this.byConversation.get(conversation.index);
  }

  /**
   * Records what every unsettled conversation shows now; a conversation settles once its run
   * has ended and no reply carries the Stop button. Returns how many are still unsettled.
   */
  sample(): number {
    const at = this.now();
    let open = 0;
    for (const conversation of this.watched) {
      if (this.settledAt.has(conversation.index)) continue;
      const replies = this.slack.replies(conversation.channel, conversation.threadTs);
      let visible = 0;
      for (const reply of replies) visible += markdownChars(reply.blocks);
      this.samples.get(conversation.index)?.push({ at, visible });
      const runEnded = this.byConversation.get(conversation.index)?.endedAt !== undefined;
      if (runEnded && replies.length > 0 && replies.every((r) => !hasStopButton(r.blocks))) {
        this.settledAt.set(conversation.index, at);
      } else open++;
    }
    return open;
  }

  /** How the service wrote this run's answer, once the run has ended. */
  writing(run: RunTimeline, firstChunkDelayMs: number): Writing | undefined {
    if (run.inProgressAt === undefined || run.endedAt === undefined) return undefined;
    const start = run.inProgressAt + firstChunkDelayMs;
    return { start, end: Math.max(start, run.endedAt), total: run.output?.length ?? 0 };
  }

  /** The first Slack call that put answer text into one of this conversation's replies. */
  firstVisibleAt(conversation: Watched, calls: readonly RecordedCall[]): number | undefined {
    const replyTs = new Set(
      this.slack.replies(conversation.channel, conversation.threadTs).map((m) => m.ts),
    );
    for (const call of calls) {
      if (!call.ok || call.args.channel !== conversation.channel) continue;
      const mine =
        (call.method === "chat.postMessage" && call.args.thread_ts === conversation.threadTs) ||
        (call.method === "chat.update" && replyTs.has(String(call.args.ts)));
      if (mine && markdownChars(call.args.blocks) > 0) return call.at;
    }
    return undefined;
  }

  close(): void {
    for (const off of this.offs) off();
  }
}
