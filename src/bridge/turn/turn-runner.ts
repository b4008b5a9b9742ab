import type {
  Conversation,
  ConversationStore,
  SettingsStore,
  TurnStore,
} from "../../store/stores.js";
import type { Turn, TurnOutcome } from "../../store/turn.js";
import type { Clock } from "../../time.js";
import type { AssistantService, BridgeLogger, Caller, Run } from "../ports.js";
import type { OutageOptions } from "./outage.js";
import { QuestionPost } from "./question-post.js";
import type { Relay } from "./relay.js";
import { replyNear } from "./reply-near.js";
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
import type { StopReason, TurnLife } from "./turn-life.js";
import { callerFor, type SettingsRead, type StepContext, type TurnStep } from "./turn-step.js";

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
 * service thread → compose the question → post it → wait for the reply to come near → start
 * the run → follow the run (beside the start's record) → finish. Each step does nothing when
 * the record says it is done, so a restart resumes where the turn stopped; whether the turn
 * was stopped or left is asked once, between steps.
 * Every stop of a turn, whatever asked, goes through `stop`.
 */
export class TurnRunner {
  private readonly steps: TurnStep[];
  private readonly start: RunStart;
  private readonly follow: (turn: Turn, context: StepContext, halt: AbortSignal) => Promise<Run>;

  constructor(private readonly deps: TurnRunnerDeps) {
    const { service, turns, conversations, settings, content, relay, clock } = deps;
    const { durable = async () => undefined } = deps;
    const post = new QuestionPost({ service, turns, content, durable });
    this.steps = [
      // The service thread, and the question's text with its post's attempt, are made side by
      // side: neither needs the other, and each is a round trip or more.
      sideBySide(threadOpen(service, conversations), post.attempt),
      post.step,
      replyNear,
    ];
    // The last step before following: its record and following the run go side by side.
    this.start = new RunStart({ service, turns, settings, clock, durable });
    this.follow = runFollow({
      relay,
      clock,
      runTimeoutMs: deps.limits.runTimeoutMs,
      stop: (life, reason) => this.stopQuietly(life, reason, "could not stop a run past its limit"),
    });
  }

  /**
   * `turn` was just recorded in `conversation`: its steps' service calls (the thread if it
   * has none yet, the question, the run's start and its stream) will come within a second or
   * two, and their budget's slots are asked for now, ahead of them (AssistantService.expect).
   */
  expect(turn: Turn, conversation: Conversation): void {
    if (turn.state !== "received") return;
    const request = (conversation.serviceThreadId === null ? 1 : 0) + 2;
    this.deps.service.expect?.({ request, run_start: 1 }, callerFor(turn.user, conversation));
  }

  /**
   * Works `life`'s turn, unless it is no longer waiting (stopped, or left). `read`: the turn as
   * read from the store just before, with nothing awaited since (it waited behind no other
   * turn); otherwise it is read again. Either way each step's write is conditional on the row
   * being the version it was computed from (store/sql/turns.ts). `conversation`: its
   * conversation read with it, and `settings` the asker's read with it (both used only with
   * `read`).
   */
  async run(
    life: TurnLife,
    read?: Turn,
    conversation?: Conversation,
    settings?: SettingsRead,
  ): Promise<void> {
    if (life.stage !== "waiting") return;
    const turn = read ?? (await this.deps.turns.byId(life.id));
    // Asked again after the read: a stop or a leave while it was on its way ended it here.
    if (life.stage !== "waiting") return;
    if (!turn || turn.state === "finished") return life.end();
    life.start(turn.runId);
    try {
      const end = await this.work(turn, life, read && conversation, read && settings);
      if (end) await this.end(turn, life, end.ending, end.run);
    } finally {
      life.end();
    }
  }

  /** How the turn ends; undefined when it is left as stored (a lost lease, a shutdown). */
  private async work(
    turn: Turn,
    life: TurnLife,
    conversation: Conversation | undefined,
    settings: SettingsRead | undefined,
  ): Promise<{ ending: Ending; run?: Run } | undefined> {
    const { limits, logger } = this.deps;
    let steps: StepContext | undefined;
    try {
      const opened = this.open(turn, life);
      const refused = refusal(turn.content, limits.maxMessageChars, turn.files.length > 0);
      if (refused) return { ending: refused };
      steps = await this.context(turn, life, conversation);
      steps.settingsRead = settings;
      const run = await this.advance(turn, life, steps);
      // The question's message is recorded (with the run's attempt, or now), and the records
      // not waited for have landed, or the turn fails.
      await this.recordMessageLeft(turn.id, steps);
      await Promise.all(steps.landing);
      await opened;
      // Left while its reply was opening (the lease lost): the new holder shows the ending.
      life.leaving.throwIfAborted();
      if (life.unshown !== undefined) throw life.unshown;
      if (!run) return { ending: stoppedEnding(life.stoppedBy) };
      const { stoppedBy, timedOut } = life;
      const context = {
        shown: life.reply.text,
        stoppedBy,
        timedOut,
        runTimeoutMs: limits.runTimeoutMs,
      };
      return { ending: runEnding(run, context), run };
    } catch (error) {
      if (life.left) {
        const shutdown = life.reason?.kind === "shutdown";
        const why = shutdown ? "for the next start" : "to its lease's holder";
        logger.info({ turn: turn.id, run: life.runId }, `turn left ${why}`);
        return undefined;
      }
      const failure = life.unshown ?? error;
      logger.warn({ turn: turn.id, err: errorSummary(failure) }, "turn ended with an error");
      // Spares whoever looks at the turn again a look for its message in the thread.
      await this.recordMessageLeft(turn.id, steps).catch((recordError: unknown) => {
        logger.warn(
          { turn: turn.id, err: errorSummary(recordError) },
          "could not record a message",
        );
      });
      const message = life.timedOut
        ? timeoutMessage(limits.runTimeoutMs)
        : describeFailure(failure);
      const phase = { kind: "unreachable", message } as const;
      return { ending: { phase, body: life.reply.text, outcome: "error" } };
    }
  }

  /**
   * Opens the reply while the steps go on: the service writes from the question on, and its
   * first words ride on the reply's first message whenever Slack lets it be made. When Slack
   * will not show the reply at all, the turn stops (`unshown`).
   */
  private open(turn: Turn, life: TurnLife): Promise<void> {
    return life.reply.open({ kind: turn.runId ? "working" : "starting" }).catch((error) => {
      const unshown: StopReason = {
        kind: "unshown",
        error: error ?? new Error("the reply could not be shown"),
      };
      void this.stopQuietly(
        life,
        unshown,
        "could not stop the run of a reply Slack would not show",
      );
    });
  }

  /** The steps in order; undefined when the turn was stopped before a run existed. */
  private async advance(
    start: Turn,
    life: TurnLife,
    context: StepContext,
  ): Promise<Run | undefined> {
    let turn = start;
    for (const step of this.steps) {
      if (!(await this.mayGoOn(turn, life))) return undefined;
      turn = await step(turn, context);
      life.ran(turn.runId);
    }
    if (!(await this.mayGoOn(turn, life))) return undefined;
    const { started, recorded } = await this.start.begin(turn, context);
    life.ran(started.runId);
    if (!(await this.mayGoOn(started, life))) return undefined;
    // Stopped while the start was on its way: the run exists now, so it is stopped and followed.
    if (life.stopped && life.runId) await this.stopRunOf(life, life.runId, started);
    return this.followRecorded(started, recorded, context);
  }

  /**
   * Whether the next step may be taken: a stop asked elsewhere is heeded first; false when
   * the turn was stopped before a run existed; throws when it was left (its lease lost, a
   * shutdown: the catch in `work` lets it go) or its reply cannot be shown.
   */
  private async mayGoOn(turn: Turn, life: TurnLife): Promise<boolean> {
    await this.heedStopRequest(turn, life);
    life.leaving.throwIfAborted();
    if (life.unshown !== undefined && turn.runId === null) throw life.unshown;
    return !(life.stopped && turn.runId === null);
  }

  /**
   * Follows the run while its start is recorded, a round trip the first words need not wait
   * for. The turn ends only once both have: should the record fail, following stops and the
   * turn ends with the record's error, as it would have before following began. A stop asked
   * elsewhere meanwhile, found on the turn as recorded, is heeded then.
   */
  private async followRecorded(
    started: Turn,
    recorded: Promise<Turn>,
    context: StepContext,
  ): Promise<Run> {
    const unrecorded = new AbortController();
    const heeded = recorded.then(
      (turn) => this.heedStopRequest(turn, context.life),
      (error) => {
        unrecorded.abort(error);
        throw error;
      },
    );
    const [followed, record] = await Promise.allSettled([
      this.follow(started, context, unrecorded.signal),
      heeded,
    ]);
    if (record.status === "rejected") throw record.reason;
    if (followed.status === "rejected") throw followed.reason;
    return followed.value;
  }

  /**
   * Records the question's message the steps posted and no run's attempt recorded (a stop
   * before the start, a failure): alone, once (StepContext.unrecordedMessage).
   */
  private async recordMessageLeft(turnId: string, steps: StepContext | undefined): Promise<void> {
    const message = steps?.unrecordedMessage;
    if (!steps || message === undefined) return;
    await this.deps.turns.recordMessage(turnId, message);
    steps.unrecordedMessage = undefined;
  }

  /** The steps' context, on the conversation read with the turn if it was (else read now). */
  private async context(turn: Turn, life: TurnLife, read?: Conversation): Promise<StepContext> {
    const conversation = read ?? (await this.deps.conversations.byId(turn.conversationId));
    if (!conversation) throw new Error(`conversation ${turn.conversationId} is missing`);
    const outage: OutageOptions = {
      giveUpAfterMs: this.deps.limits.serviceOutageMs,
      clock: this.deps.clock,
      // Waiting out an outage ends at once when the turn is stopped or left.
      signal: life.waits,
      onRetry: (error, attempt) => {
        this.deps.logger.warn(
          { turn: turn.id, attempt, err: errorSummary(error) },
          "service not answering; retrying",
        );
        life.reply.status({ kind: "retrying", note: STILL_TRYING });
      },
    };
    return { life, conversation, outage, party: turn.user, landing: [] };
  }

  /** Shows the ending, then records the turn finished, once (whether or not Slack took it). */
  private async end(turn: Turn, life: TurnLife, ending: Ending, run?: Run): Promise<void> {
    try {
      await life.reply.finish(ending.phase, ending.body);
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
   * Stops `life`'s turn, whatever asked (StopReason): the one way a turn stops or is left.
   * A leave (lease lost, shutdown) leaves it as stored, at once. Any other stop: a run that
   * exists is stopped at the service, once however often asked (following then sees it end as
   * `canceled`); a turn taken up without a run has its waits aborted and ends at its next
   * step; a turn still waiting in its queue without a run ends at once, sending nothing.
   * False when the service did not take the stop.
   */
  async stop(life: TurnLife, reason: StopReason): Promise<boolean> {
    if (!life.stop(reason)) return true;
    const stored = await this.deps.turns.byId(life.id);
    const runId = life.runId ?? stored?.runId ?? undefined;
    if (runId) return this.stopRunOf(life, runId, stored);
    // The stage as it is after the read: the runner may have taken the turn up meanwhile. A
    // waiting one is ended in the same step as the stage is read, so the runner, reaching it
    // later (or back from its own read of it), leaves it alone. Should `stored` be stale, the
    // store refuses a second finish (no transition leaves `finished`).
    if (life.stopWithoutRun() && stored && stored.state !== "finished") {
      await this.end(stored, life, stoppedEnding(life.stoppedBy ?? stored.user));
    }
    return true;
  }

  /** `stop` for those who only log its failure (the time limit, a reply Slack will not show). */
  private async stopQuietly(life: TurnLife, reason: StopReason, failed: string): Promise<void> {
    try {
      await this.stop(life, reason);
    } catch (error) {
      this.deps.logger.warn({ turn: life.id, err: errorSummary(error) }, failed);
    }
  }

  /** A stop asked through another replica (recorded on the turn) is heeded as one asked here. */
  private async heedStopRequest(turn: Turn, life: TurnLife): Promise<void> {
    const user = turn.stopRequestedBy;
    if (user !== null && life.reason === undefined) await this.stop(life, { kind: "person", user });
  }

  /** Stops the run at the service, once however often asked (TurnLife.stopRun). */
  private stopRunOf(life: TurnLife, runId: string, turn: Turn | undefined): Promise<boolean> {
    return life.stopRun(async () => {
      const caller = turn ? await this.callerOf(turn) : { party: life.asker };
      return this.stopRun(runId, caller);
    });
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

/**
 * Two steps that write different records (the conversation's, the turn's), run at once: the
 * turn as the second leaves it. Both have ended, whatever either did, before it settles.
 */
function sideBySide(other: TurnStep, step: TurnStep): TurnStep {
  return async (turn, context) => {
    const [first, second] = await Promise.allSettled([other(turn, context), step(turn, context)]);
    if (first.status === "rejected") throw first.reason;
    if (second.status === "rejected") throw second.reason;
    return second.value;
  };
}
