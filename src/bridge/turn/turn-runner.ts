import type { ConversationStore, SettingsStore, TurnStore } from "../../store/stores.js";
import type { Turn, TurnOutcome } from "../../store/turn.js";
import type { Clock } from "../../time.js";
import type { LiveTurn } from "../live-turn.js";
import type { AssistantService, BridgeLogger, Caller, Run } from "../ports.js";
import type { OutageOptions } from "./outage.js";
import { QuestionPost } from "./question-post.js";
import type { Relay } from "./relay.js";
import { runFollow } from "./run-follow.js";
import { RunStart } from "./run-start.js";
import { errorSummary } from "./service-failure.js";
import { threadOpen } from "./thread-open.js";
import type { TurnContent } from "./turn-content.js";
import {
  describeFailure,
  type Ending,
  refusal,
  runEnding,
  STILL_TRYING,
  stoppedEnding,
  timeoutMessage,
} from "./turn-ending.js";
import { callerFor, type StepContext, type TurnStep } from "./turn-step.js";

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
}

export interface TurnRunnerDeps {
  service: AssistantService;
  relay: Relay;
  turns: TurnStore;
  conversations: ConversationStore;
  settings: SettingsStore;
  content: TurnContent;
  logger: BridgeLogger;
  limits: TurnLimits;
  clock: Clock;
  events?: TurnEvents;
  /** Resolves once every write made so far would survive a power cut (Stores.durable). */
  durable?: () => Promise<void>;
}

/**
 * Works one turn from its stored state to the end, as a short list of steps: open the
 * service thread → compose the question → post it → start the run → follow the run →
 * finish. Each step does nothing when the record says it is done, so a restart resumes
 * where the turn stopped; whether the turn was stopped is asked once, between steps.
 */
export class TurnRunner {
  private readonly closing = new AbortController();
  private readonly steps: TurnStep[];
  private readonly follow: (turn: Turn, context: StepContext) => Promise<Run>;

  constructor(private readonly deps: TurnRunnerDeps) {
    const { service, turns, conversations, settings, content, relay, clock } = deps;
    const { durable = async () => undefined } = deps;
    this.steps = [
      threadOpen(service, conversations),
      content.step,
      new QuestionPost({ service, turns, content, durable }).step,
      new RunStart({ service, turns, settings, clock, durable }).step,
    ];
    this.follow = runFollow({
      relay,
      clock,
      runTimeoutMs: deps.limits.runTimeoutMs,
      stopRun: (runId, caller) => this.stopRun(runId, caller),
      closing: this.closing.signal,
    });
  }

  /** Works `live`'s turn, unless it is no longer waiting (stopped, or the bot is closing). */
  async run(live: LiveTurn): Promise<void> {
    if (this.left(live) || live.stage !== "waiting") return;
    const turn = await this.deps.turns.byId(live.id);
    // Asked again after the read: a stop while it was on its way ended the turn (`stop`).
    if (this.left(live) || live.stage !== "waiting") return;
    if (!turn || turn.state === "finished") {
      live.stage = "ended";
      return;
    }
    live.stage = "running";
    live.runId = turn.runId ?? undefined;
    heedStopRequest(turn, live);
    try {
      const end = await this.work(turn, live);
      if (end) await this.end(turn, live, end.ending, end.run);
    } finally {
      live.stage = "ended";
    }
  }

  /** How the turn ends; undefined when the bot is shutting down and leaves it for the next start. */
  private async work(
    turn: Turn,
    live: LiveTurn,
  ): Promise<{ ending: Ending; run?: Run } | undefined> {
    const { limits, logger } = this.deps;
    try {
      const opened = this.open(turn, live);
      const refused = refusal(turn.content, limits.maxMessageChars, turn.files.length > 0);
      if (refused) return { ending: refused };
      const run = await this.advance(turn, live, await this.context(turn, live));
      await opened;
      if (live.unshown !== undefined) throw live.unshown;
      if (!run) return { ending: stoppedEnding(live.stoppedBy) };
      const { stoppedBy, timedOut } = live;
      const context = {
        shown: live.reply.text,
        stoppedBy,
        timedOut,
        runTimeoutMs: limits.runTimeoutMs,
      };
      return { ending: runEnding(run, context), run };
    } catch (error) {
      if (this.left(live)) {
        const why = this.closing.signal.aborted ? "for the next start" : "to its lease's holder";
        logger.info({ turn: turn.id, run: live.runId }, `turn left ${why}`);
        return undefined;
      }
      const failure = live.unshown ?? error;
      logger.warn({ turn: turn.id, err: errorSummary(failure) }, "turn ended with an error");
      const message = live.timedOut
        ? timeoutMessage(limits.runTimeoutMs)
        : describeFailure(failure);
      const phase = { kind: "unreachable", message } as const;
      return { ending: { phase, body: live.reply.text, outcome: "error" } };
    }
  }

  /**
   * Opens the reply while the steps go on: the service writes from the question on, and its
   * first words ride on the reply's first message whenever Slack lets it be made. When Slack
   * will not show the reply at all, the turn's waits end and its run, if any, is stopped.
   */
  private open(turn: Turn, live: LiveTurn): Promise<void> {
    return live.reply.open({ kind: turn.runId ? "working" : "starting" }).catch((error) => {
      live.unshown ??= error ?? new Error("the reply could not be shown");
      live.waits.abort();
      const runId = live.runId;
      if (runId) {
        void this.callerOf(turn)
          .then((caller) => this.stopOnce(live, runId, caller))
          .catch((stopError: unknown) => {
            this.deps.logger.warn(
              { turn: turn.id, err: errorSummary(stopError) },
              "could not stop the run of a reply Slack would not show",
            );
          });
      }
    });
  }

  /** The steps in order; undefined when the turn was stopped before a run existed. */
  private async advance(
    start: Turn,
    live: LiveTurn,
    context: StepContext,
  ): Promise<Run | undefined> {
    let turn = start;
    for (const step of [...this.steps, undefined]) {
      if (live.unshown !== undefined && turn.runId === null) throw live.unshown;
      if (live.stopped && turn.runId === null) return undefined;
      if (!step) break;
      turn = await step(turn, context);
      live.runId = turn.runId ?? undefined;
      heedStopRequest(turn, live);
    }
    // Stopped (or unshowable) while the start was on its way: the run exists, so it is stopped and followed.
    if ((live.stopped || live.unshown !== undefined) && live.runId) {
      await this.stopOnce(live, live.runId, await this.callerOf(turn));
    }
    return this.follow(turn, context);
  }

  private async context(turn: Turn, live: LiveTurn): Promise<StepContext> {
    const conversation = await this.deps.conversations.byId(turn.conversationId);
    if (!conversation) throw new Error(`conversation ${turn.conversationId} is missing`);
    const outage: OutageOptions = {
      giveUpAfterMs: this.deps.limits.serviceOutageMs,
      clock: this.deps.clock,
      // Waiting out an outage ends at once when the turn is stopped or the bot shuts down.
      signal: AbortSignal.any([live.waits.signal, this.closing.signal, live.leaving.signal]),
      onRetry: (error, attempt) => {
        this.deps.logger.warn(
          { turn: turn.id, attempt, err: errorSummary(error) },
          "service not answering; retrying",
        );
        live.reply.status({ kind: "retrying", note: STILL_TRYING });
      },
    };
    return { live, conversation, outage, party: turn.user };
  }

  /** Shows the ending, then records the turn finished, once (whether or not Slack took it). */
  private async end(turn: Turn, live: LiveTurn, ending: Ending, run?: Run): Promise<void> {
    try {
      await live.reply.finish(ending.phase, ending.body);
    } catch (error) {
      // Slack would not take the ending: the turn is over all the same, and recorded so.
      this.deps.logger.error(
        { turn: turn.id, err: errorSummary(error) },
        "could not show the ending",
      );
    }
    const { outcome } = ending;
    const result = { modelUsed: run?.modelUsed ?? null, error: run?.error ?? null };
    await this.deps.turns.finish(turn.id, { outcome, ...result });
    this.deps.events?.onFinished?.(turn, outcome, run?.status);
  }

  /**
   * Stops `live`'s turn for `user`. A run that exists is stopped at the service (following
   * then sees it end as `canceled`); a running turn without a run has its waits aborted; a
   * turn waiting in its queue without a run ends as stopped at once, sending nothing.
   */
  async stop(live: LiveTurn, user: string): Promise<boolean> {
    live.stoppedBy ??= user;
    const stored = await this.deps.turns.byId(live.id);
    const runId = live.runId ?? stored?.runId ?? undefined;
    if (runId) {
      const caller = stored ? await this.callerOf(stored) : { party: user };
      return this.stopOnce(live, runId, caller);
    }
    // The stage as it is after the read: the runner may have taken the turn up meanwhile.
    if (live.stage === "running") {
      live.waits.abort();
      return true;
    }
    if (live.stage === "waiting") {
      // Ended in the same step as the stage was read, so the runner, reaching the turn later
      // (or back from its own read of it), leaves it alone. Should `stored` be stale, the
      // store refuses a second finish (no transition leaves `finished`).
      live.stage = "ended";
      if (stored && stored.state !== "finished") await this.end(stored, live, stoppedEnding(user));
    }
    return true;
  }

  /**
   * The bot is stopping: no new turn starts, waits and run-following end now, and every
   * turn not finished by then stays in the store, as it is, for the next start.
   */
  shutdown(): void {
    this.closing.abort();
  }

  /**
   * This process must stop working on `live`'s turn and leave it as stored (its
   * conversation's lease is lost): as a shutdown does, for this turn alone.
   */
  leave(live: LiveTurn): void {
    live.leaving.abort();
  }

  /** Whether the turn is to be left as stored: the bot is shutting down, or its lease is lost. */
  private left(live: LiveTurn): boolean {
    return this.closing.signal.aborted || live.leaving.signal.aborted;
  }

  /** Stops `live`'s run unless a stop of it is on its way or was taken (LiveTurn.stopping). */
  private stopOnce(live: LiveTurn, runId: string, caller: Caller): Promise<boolean> {
    live.stopping ??= this.stopRun(runId, caller).then((taken) => {
      if (!taken) live.stopping = undefined;
      return taken;
    });
    return live.stopping;
  }

  /** A turn's calls outside its steps (a stop): for its asker, as its thread's owner. */
  private async callerOf(turn: Turn): Promise<Caller> {
    return callerFor(turn.user, await this.deps.conversations.byId(turn.conversationId));
  }

  /** Asks the service to stop a run; the relay then sees it end as `canceled`. */
  private async stopRun(runId: string, caller: Caller): Promise<boolean> {
    try {
      await this.deps.service.stopRun(runId, caller);
      return true;
    } catch (error) {
      this.deps.logger.warn({ run: runId, err: errorSummary(error) }, "stopping the run failed");
      return false;
    }
  }
}

/** A stop asked from another replica (recorded on the turn) counts as one asked here. */
function heedStopRequest(turn: Turn, live: LiveTurn): void {
  if (turn.stopRequestedBy !== null) live.stoppedBy ??= turn.stopRequestedBy;
}
