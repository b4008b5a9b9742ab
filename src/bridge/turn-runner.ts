import type { Run } from "../service/schemas.js";
import type { ConversationStore } from "../store/conversations.js";
import type { SettingsStore } from "../store/settings.js";
import type { Turn, TurnOutcome, TurnStore } from "../store/turns.js";
import { throughOutage } from "./outage.js";
import type { AssistantService, Reply, ReplyPhase, ReplySink, ReplyView } from "./ports.js";
import { QuestionPost } from "./question-post.js";
import type { Relay } from "./relay.js";
import { RunStart } from "./run-start.js";
import type { TurnContent } from "./turn-content.js";
import {
  describeFailure,
  errorSummary,
  refusal,
  runEnding,
  STILL_TRYING,
  timeoutMessage,
} from "./turn-ending.js";
import { turnReply } from "./turn-reply.js";

export interface BridgeLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface TurnLimits {
  /** Longest person's message passed on, characters. */
  maxMessageChars: number;
  /** A run not ended after this long is stopped and the reply says so, ms. */
  runTimeoutMs: number;
  /** How long the service may stay unreachable during one turn before it ends with an error, ms. */
  serviceOutageMs: number;
}

export interface TurnEvents {
  onFinished?: (turn: Turn, outcome: TurnOutcome, runStatus: string | undefined) => void;
  onFirstText?: (turn: Turn) => void;
}

export interface TurnRunnerDeps {
  service: AssistantService;
  relay: Relay;
  turns: TurnStore;
  conversations: ConversationStore;
  settings: SettingsStore;
  replies: ReplySink;
  logger: BridgeLogger;
  limits: TurnLimits;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  events?: TurnEvents;
  /** Puts the thread's unseen messages before a question; without it, the question alone. */
  content?: TurnContent;
}

/** A turn being worked on, as the stop controls see it. */
export interface ActiveTurn {
  turn: Turn;
  runId: string | undefined;
  /** Aborts waiting (in the budget queue, between polls); never an in-flight POST. */
  controller: AbortController;
  stoppedBy: string | undefined;
  timedOut: boolean;
}

/** How long a timed-out run may take to end after it was told to stop, ms (at most the timeout). */
const STOP_GRACE_MS = 10_000;

/** Works one turn from its stored state to the end; every step is idempotent. */
export class TurnRunner {
  readonly active = new Map<string, ActiveTurn>();
  /** Stops asked for turns that wait behind an earlier turn of their conversation. */
  private readonly pendingStops = new Map<string, string>();
  private readonly closing = new AbortController();
  private readonly question: QuestionPost;
  private readonly runStart: RunStart;

  constructor(private readonly deps: TurnRunnerDeps) {
    this.question = new QuestionPost({
      service: deps.service,
      turns: deps.turns,
      content: deps.content,
    });
    this.runStart = new RunStart(deps);
  }

  async run(turnId: string): Promise<void> {
    const { turns, logger } = this.deps;
    if (this.closing.signal.aborted) return;
    const turn = turns.byId(turnId);
    if (!turn || turn.state === "finished") return;
    const active: ActiveTurn = {
      turn,
      runId: turn.runId ?? undefined,
      controller: new AbortController(),
      stoppedBy: undefined,
      timedOut: false,
    };
    this.active.set(turn.id, active);
    active.stoppedBy = this.pendingStops.get(turn.id);
    this.pendingStops.delete(turn.id);
    const reply = this.replyFor(turn);
    let shown = "";
    const view = (phase: ReplyPhase, body = shown): ReplyView => ({
      body,
      phase,
      notes: turn.notes,
    });
    try {
      await reply.open(view({ kind: turn.runId ? "working" : "starting" }));
      const early = refusal(turn.content, this.deps.limits.maxMessageChars);
      if (early) {
        await this.end(turn, reply, view(early.phase, ""), early.outcome);
        return;
      }
      const run = await this.work(turn, active, reply, (text) => {
        if (shown === "") this.deps.events?.onFirstText?.(turn);
        shown = text;
        reply.show(view({ kind: "working" }));
      });
      if (run === undefined) {
        await this.end(turn, reply, view({ kind: "stopped", ...by(active) }), "stopped");
        return;
      }
      await this.finishRun(turn, active, reply, run, shown);
    } catch (error) {
      if (this.closing.signal.aborted) {
        logger.info({ turn: turn.id, run: turn.runId }, "turn left for the next start");
        return;
      }
      const message = active.timedOut
        ? timeoutMessage(this.deps.limits.runTimeoutMs)
        : describeFailure(error);
      logger.warn({ turn: turn.id, err: errorSummary(error) }, "turn ended with an error");
      await this.end(turn, reply, view({ kind: "unreachable", message }), "error").catch(
        (e: unknown) =>
          logger.error({ turn: turn.id, err: errorSummary(e) }, "could not show the error"),
      );
    } finally {
      this.active.delete(turn.id);
    }
  }

  /** Runs the steps; undefined when the turn was stopped before a run existed. */
  private async work(
    turn: Turn,
    active: ActiveTurn,
    reply: Reply,
    onText: (text: string) => void,
  ): Promise<Run | undefined> {
    const { service, conversations, relay } = this.deps;
    const signal = active.controller.signal;
    // The note keeps what was written so far on screen: the answer resumes under it.
    let written = "";
    // Whether the reply shows something other than "Starting…" (queued, retrying, or a
    // placeholder from before this run): only then is a status-only "Working…" edit worth
    // its place in the workspace's edit budget. Otherwise the first edit is the first text.
    let showsWaiting = turn.replyParts.length > 0;
    const retrying = () => {
      showsWaiting = true;
      reply.show({
        body: written,
        phase: { kind: "retrying", note: STILL_TRYING },
        notes: turn.notes,
      });
    };
    const outage = {
      giveUpAfterMs: this.deps.limits.serviceOutageMs,
      now: this.deps.now,
      sleep: this.deps.sleep,
      // Waiting out an outage ends at once when the bot shuts down.
      signal: AbortSignal.any([signal, this.closing.signal]),
      onRetry: (error: unknown, attempt: number) => {
        this.deps.logger.warn(
          { turn: turn.id, attempt, err: errorSummary(error) },
          "service not answering; retrying",
        );
        retrying();
      },
    };
    const party = turn.user;

    const conversation = conversations.byId(turn.conversationId);
    if (!conversation) throw new Error(`conversation ${turn.conversationId} is missing`);
    let threadId = conversation.serviceThreadId;
    // A turn stopped before its question reached the service sends nothing at all.
    if (active.stoppedBy && !turn.serviceMessageId) return undefined;
    if (!threadId) {
      const thread = await throughOutage(
        () => service.openThread({ assistantId: conversation.assistantId }, { party }),
        outage,
      );
      conversations.setServiceThread(conversation.id, thread.id);
      threadId = thread.id;
    }
    const tid = threadId;

    if (!turn.serviceMessageId) {
      if (active.stoppedBy) return undefined;
      const posted = await this.question.post(turn, conversation, tid, {
        outage,
        signal,
        party,
        stopped: () => active.stoppedBy !== undefined,
      });
      if (!posted) return undefined;
    }

    let runId = turn.runId;
    if (!runId) {
      if (active.stoppedBy) return undefined;
      const started = await this.runStart.start(turn, tid, {
        outage,
        signal,
        party,
        stopped: () => active.stoppedBy !== undefined,
        onQueued: (ahead) => {
          showsWaiting = true;
          reply.show({ body: "", phase: { kind: "queued", ahead }, notes: turn.notes });
        },
      });
      if (started === undefined) return undefined;
      active.runId = runId = started;
      if (showsWaiting) reply.show({ body: "", phase: { kind: "working" }, notes: turn.notes });
    }

    if (active.stoppedBy) await this.stopRun(runId, turn.user);
    // Following ends when the bot shuts down, or when a timed-out run is not stopped either.
    const abandon = new AbortController();
    const follow = AbortSignal.any([abandon.signal, this.closing.signal]);
    let giveUp: NodeJS.Timeout | undefined;
    const { runTimeoutMs } = this.deps.limits;
    // Counted from the run's start, so a restart does not give a run a new allowance.
    const started = turn.runStartedAt ?? this.deps.now();
    const left = Math.max(0, started + runTimeoutMs - this.deps.now());
    const timer = setTimeout(() => {
      active.timedOut = true;
      void this.stopRun(runId, turn.user);
      giveUp = setTimeout(() => abandon.abort(), Math.min(STOP_GRACE_MS, runTimeoutMs));
    }, left);
    try {
      return await throughOutage(
        () =>
          relay.follow(runId, {
            party,
            signal: follow,
            onText: (text) => {
              written = text;
              onText(text);
            },
          }),
        {
          ...outage,
          signal: AbortSignal.any([signal, follow]),
        },
      );
    } finally {
      clearTimeout(timer);
      clearTimeout(giveUp);
    }
  }

  private async finishRun(
    turn: Turn,
    active: ActiveTurn,
    reply: Reply,
    run: Run,
    shown: string,
  ): Promise<void> {
    this.deps.turns.update(turn.id, { modelUsed: run.modelUsed ?? null, error: run.error ?? null });
    const ending = runEnding(run, {
      shown,
      stoppedBy: active.stoppedBy,
      timedOut: active.timedOut,
      runTimeoutMs: this.deps.limits.runTimeoutMs,
    });
    const view = { body: ending.body, phase: ending.phase, notes: turn.notes };
    await this.end(turn, reply, view, ending.outcome, run.status);
  }

  /**
   * The bot is stopping: no new turn starts, waits and run-following end now, and every
   * turn not finished by then stays in the store, as it is, for the next start.
   */
  shutdown(): void {
    this.closing.abort();
  }

  private async end(
    turn: Turn,
    reply: Reply,
    view: ReplyView,
    outcome: TurnOutcome,
    runStatus?: string,
  ): Promise<void> {
    try {
      await reply.finish(view);
    } finally {
      this.deps.turns.update(turn.id, { state: "finished", outcome });
      this.deps.events?.onFinished?.(turn, outcome, runStatus);
    }
  }

  /**
   * Stops a turn for `user`. A run that exists is stopped at the service (the relay then
   * sees it end as `canceled`); a turn still waiting for its run start leaves the queue
   * without starting one.
   */
  async requestStop(turnId: string, user: string): Promise<boolean> {
    const active = this.active.get(turnId);
    if (!active) return this.stopWaiting(turnId, user);
    active.stoppedBy ??= user;
    if (active.runId) return this.stopRun(active.runId, user);
    active.controller.abort();
    return true;
  }

  /**
   * A turn waiting behind an earlier turn of its conversation ends as stopped at once,
   * without any service call; `run` later finds it finished. One that already has a run
   * (resumed after a restart) has the run stopped and is followed to its end as usual.
   */
  private async stopWaiting(turnId: string, user: string): Promise<boolean> {
    const turn = this.deps.turns.byId(turnId);
    if (!turn || turn.state === "finished") return true;
    if (turn.runId) {
      this.pendingStops.set(turnId, user);
      return this.stopRun(turn.runId, user);
    }
    // Recorded before any await, so a `run` starting meanwhile sees the turn finished.
    this.deps.turns.update(turn.id, { state: "finished", outcome: "stopped" });
    const view: ReplyView = { body: "", phase: { kind: "stopped", by: user }, notes: turn.notes };
    await this.end(turn, this.replyFor(turn), view, "stopped");
    return true;
  }

  private replyFor(turn: Turn): Reply {
    return turnReply(this.deps.replies, this.deps.turns, turn);
  }

  /** Asks the service to stop a run; the relay then sees it end as `canceled`. */
  async stopRun(runId: string, party: string): Promise<boolean> {
    try {
      await this.deps.service.stopRun(runId, { party });
      return true;
    } catch (error) {
      this.deps.logger.warn({ run: runId, err: errorSummary(error) }, "stopping the run failed");
      return false;
    }
  }
}

const by = (active: ActiveTurn) => (active.stoppedBy ? { by: active.stoppedBy } : {});
