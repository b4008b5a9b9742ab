import type { FakeSlack, MessageChange } from "../tools/fake-slack/server.js";
import type { RunningSimulator, RunTextPiece, SimulatorRun } from "../tools/simulator/server.js";
import {
  answerPart,
  type Content,
  follow,
  type Progress,
  readable,
  type Step,
  shownChars,
  wordEnds,
} from "./visibility.js";

/**
 * Watches one scenario from outside the bot, the way a person would see it: the service's
 * side from the simulator's stamps (each piece of text as it left, when each run ended) and
 * Slack's side from the fake Slack's timeline (each post, edit or stream append, when it
 * happened). Whatever reply strategy the bot uses, only what Slack showed counts.
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
  /** The pieces of text as they were written, stamped. */
  pieces: RunTextPiece[];
  endedAt?: number;
  status?: string;
  output?: string;
}

/**
 * What a person saw of one answer (visibility.ts). Counted from the question, the first word
 * is what Slack's floor bounds, however long the bot held the service back.
 */
export interface Measured extends Progress {
  /** Characters the service wrote. */
  answerChars: number;
}

/** A thread that changed nothing for this long after its run ended is taken as settled, ms. */
const QUIET_MS = 30_000;

function hasStopButton(content: Content): boolean {
  return JSON.stringify(content.blocks ?? []).includes('"stop_run"');
}

export class Observer {
  readonly runs = new Map<string, RunTimeline>();
  /** The latest run of each conversation. */
  private readonly byConversation = new Map<number, RunTimeline>();
  private readonly watched: Watched[] = [];
  private readonly settled = new Set<number>();
  private readonly offs: (() => void)[] = [];

  constructor(
    sim: RunningSimulator,
    private readonly slack: FakeSlack,
    private readonly now: () => number = Date.now,
  ) {
    const events = sim.control.events;
    const onStarted = (run: SimulatorRun) => {
      const timeline: RunTimeline = { runId: run.id, threadId: run.threadId, pieces: [] };
      // The message a run starts on is already in the thread: its question names the conversation.
      const trigger = sim.control.messages(run.threadId).find((m) => m.id === run.triggerMessageId);
      const index = /question (\d+):/.exec(trigger?.content ?? "")?.[1];
      if (index !== undefined) {
        timeline.conversation = Number(index);
        this.byConversation.set(Number(index), timeline);
      }
      this.runs.set(run.id, timeline);
    };
    const onText = (piece: RunTextPiece) => this.runs.get(piece.runId)?.pieces.push(piece);
    const onEnded = (run: SimulatorRun) => {
      const timeline = this.runs.get(run.id);
      if (!timeline) return;
      timeline.endedAt = this.now();
      timeline.status = run.status;
      const text = run.output?.[0]?.text;
      if (text !== undefined) timeline.output = text;
    };
    events.on("run-started", onStarted);
    events.on("run-text", onText);
    events.on("run-ended", onEnded);
    this.offs.push(
      () => events.off("run-started", onStarted),
      () => events.off("run-text", onText),
      () => events.off("run-ended", onEnded),
    );
  }

  watch(conversation: Watched): void {
    this.watched.push(conversation);
  }

  watchedConversations(): readonly Watched[] {
    return this.watched;
  }

  /** The run of a conversation, matched through the message the run was started on. */
  runOf(conversation: Watched): RunTimeline | undefined {
    return this.byConversation.get(conversation.index);
  }

  /**
   * How many conversations are still going. One is done once its run has ended, no reply
   * carries a Stop button and either the thread shows the whole answer or it changed nothing
   * for QUIET_MS (an answer that will never show whole must not hold the bench forever).
   */
  open(): number {
    let open = 0;
    for (const conversation of this.watched) {
      if (this.settled.has(conversation.index)) continue;
      const run = this.runOf(conversation);
      const replies = this.slack.replies(conversation.channel, conversation.threadTs);
      const stoppable = replies.some((reply) => hasStopButton(reply));
      const answer = run === undefined ? "" : readable(textOf(run));
      const showing = replies.map((reply) => answerPart(reply)).join("\n");
      const whole = answer !== "" && shownChars(answer, showing) === answer.length;
      const quiet = (this.changesOf(conversation).at(-1)?.at ?? 0) + QUIET_MS <= this.now();
      if (run?.endedAt !== undefined && replies.length > 0 && !stoppable && (whole || quiet)) {
        this.settled.add(conversation.index);
      } else open++;
    }
    return open;
  }

  /** What a person saw of this conversation's answer; undefined before its run wrote anything. */
  measure(conversation: Watched, until: number, sampleMs?: number): Measured | undefined {
    const run = this.runOf(conversation);
    if (!run || run.pieces.length === 0) return undefined;
    let count = 0;
    const steps: Step[] = run.pieces.map((piece) => {
      count += readable(piece.text).length;
      return { at: piece.at, count };
    });
    const asked = this.slack.timeline.find(
      (change) => change.channel === conversation.channel && change.ts === conversation.threadTs,
    );
    const written = { steps, wordEnds: wordEnds(textOf(run)), askedAt: asked?.at };
    const shown = this.shownSteps(run, this.changesOf(conversation));
    return { ...follow(written, shown, until, sampleMs), answerChars: textOf(run).length };
  }

  close(): void {
    for (const off of this.offs) off();
  }

  /** The bot's changes to messages in this conversation's thread, in order. */
  private changesOf(conversation: Watched): MessageChange[] {
    return this.slack.timeline.filter(
      (change) =>
        change.channel === conversation.channel &&
        change.thread_ts === conversation.threadTs &&
        change.bot_id === this.slack.botId,
    );
  }

  /**
   * After each change: the readable characters of the answer the thread's replies show from
   * its start, fragments of words included (follow() keeps the whole words).
   */
  private shownSteps(run: RunTimeline, changes: readonly MessageChange[]): Step[] {
    const answer = readable(textOf(run));
    const bodies = new Map<string, string>();
    return changes.map((change) => {
      if (change.kind === "delete") bodies.delete(change.ts);
      else bodies.set(change.ts, answerPart(change.content));
      // Replies read in ts order, which is the order of their first change.
      return { at: change.at, count: shownChars(answer, [...bodies.values()].join("\n")) };
    });
  }
}

/** The run's answer: its final output, else what it has written so far. */
function textOf(run: RunTimeline): string {
  return run.output ?? run.pieces.map((piece) => piece.text).join("");
}
