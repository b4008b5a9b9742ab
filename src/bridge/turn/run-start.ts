import type { RunSettings, SettingsStore, TurnStore } from "../../store/stores.js";
import type { Turn } from "../../store/turn.js";
import type { Clock } from "../../time.js";
import type { AssistantService, QueueInfo, Run } from "../ports.js";
import { throughOutage } from "./outage.js";
import { changedNothing } from "./service-failure.js";
import { serviceThreadOf } from "./thread-open.js";
import { callerOf, type StepContext } from "./turn-step.js";

/**
 * How long the start must have waited for the service's budget before the reply shows it
 * "queued", ms. A shorter wait (a round trip to the budget replicas share, requests ahead that
 * go at once) says nothing a person needs, and shown, it would end the first message's wait
 * for the first words: the message would go without them, and they would wait for a change.
 * Settings read this long before the start is sent are also read again.
 */
const SHOWN_WAIT_MS = 1_000;

/**
 * A run start was sent and whether the service started the run cannot be known: it failed
 * after it may have reached the service, or the turn was found `run_starting` after a
 * restart. The interface offers no way to find a thread's runs, and a second start would
 * make the assistant answer twice, so the turn ends here (turn-ending.ts says so).
 */
export class RunStartUnknown extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the run start was sent but its outcome is unknown", options);
    this.name = "RunStartUnknown";
  }
}

/**
 * The step that starts a turn's run on its posted message, at most once. The person's
 * settings for the channel are those of about the moment the start is sent (read with the
 * question's record when the turn ran at once, else beside the start's wait in the service
 * budget; read again when that read is SHOWN_WAIT_MS old or more) and recorded with
 * the attempt (`run_starting`) once the start has its connection, just before a byte is
 * written, in one write with the question's message when that is not recorded yet: a
 * process that dies while the connection opens leaves the turn as it was (`message_posted`,
 * or `posting`, whose message is looked for first), to be started by whoever resumes it. The
 * run id and the moment it started are recorded once the service answers.
 *
 * Only a start that certainly started nothing (a 429, a connection never made) is sent
 * again, through the outage loop. A stop aborts the start while it waits in the budget, but
 * never once it is sent: the run the service may be creating would go on unseen. The runner
 * stops that run as soon as its id is known.
 */
export class RunStart {
  constructor(
    private readonly deps: {
      service: AssistantService;
      turns: TurnStore;
      settings: SettingsStore;
      clock: Clock;
      /** Resolves once the attempt's record would survive a power cut (Stores.durable). */
      durable?: () => Promise<void>;
    },
  ) {}

  /** The turn as recorded once its run has started (unchanged when stopped before one). */
  readonly step = async (turn: Turn, context: StepContext): Promise<Turn> =>
    (await this.begin(turn, context)).recorded;

  /**
   * Starts the turn's run: `started` is the turn with its run as it will be recorded, as soon
   * as the service has answered, and `recorded` settles once the record is written. Whoever
   * follows the run need not wait for the record (a round trip): the run is this turn's
   * whether or not it lands, and `recorded` says when it did not. The turn unchanged (no run,
   * `recorded` at once) when it was stopped while its start waited in the budget.
   */
  async begin(
    turn: Turn,
    context: StepContext,
  ): Promise<{ started: Turn; recorded: Promise<Turn> }> {
    const unchanged = { started: turn, recorded: Promise.resolve(turn) };
    if (turn.runId !== null || turn.serviceMessageId === null) return unchanged;
    // Sent by an earlier process (or before a shutdown) that never learnt the outcome.
    if (turn.state === "run_starting") throw new RunStartUnknown();
    const { life } = context;
    let run: Run;
    try {
      run = await throughOutage(() => this.attempt(turn, context), context.outage);
    } catch (error) {
      // Stopped while the start waited (in the budget, or to be sent again): nothing started.
      const unknown = error instanceof RunStartUnknown;
      if (life.stopped && life.waits.aborted && !unknown) return unchanged;
      throw error;
    }
    const start = { runId: run.id, startedAt: this.deps.clock.now() };
    const recorded = this.deps.turns.recordRunStart(turn.id, start);
    // Told by whoever awaits it; never an unhandled rejection meanwhile.
    recorded.catch(() => undefined);
    life.reply.status({ kind: "working" });
    const started = {
      ...turn,
      state: "run_started" as const,
      runId: run.id,
      runStartedAt: start.startedAt,
    };
    return { started, recorded };
  }

  /** One start, sent at most once; throws RunStartUnknown when it may have started a run. */
  private async attempt(turn: Turn, context: StepContext): Promise<Run> {
    const { service, turns, settings } = this.deps;
    const { life } = context;
    const key = { team: turn.team, channel: turn.channel, user: turn.user };
    const triggerMessageId = turn.serviceMessageId as string;
    const waits = untilSent(context.outage.signal ?? life.waits);
    // Read with the question's record (used once), else now while the start waits in the
    // budget; read again when the body is built (just before it is sent) if that read is old
    // by then: what is sent is the settings of about the moment it goes.
    const known = context.settingsRead;
    context.settingsRead = undefined;
    const asked = known?.at ?? this.deps.clock.now();
    const early = known ? Promise.resolve(known.settings) : settings.get(key);
    early.catch(() => undefined);
    let sent: RunSettings | undefined;
    let recorded = false;
    let recordFailure: unknown;
    const queued = queuedShown(this.deps.clock, (p) =>
      life.reply.status({ kind: "queued", ahead: p.position, where: "service" }),
    );
    try {
      return await service.startRun(
        serviceThreadOf(context),
        async () => {
          const waited = this.deps.clock.now() - asked >= SHOWN_WAIT_MS;
          sent = await (waited ? settings.get(key) : early);
          return { triggerMessageId, ...sent };
        },
        {
          ...callerOf(context),
          signal: waits.signal,
          onQueued: queued.told,
          // Once this attempt has its connection; not a byte is written before this resolves.
          onSend: async () => {
            queued.over();
            waits.detach();
            // The question's message, when not recorded yet, in the same write (StepContext).
            const message = context.unrecordedMessage;
            try {
              await turns.recordRunAttempt(turn.id, sent as RunSettings, { message });
              context.unrecordedMessage = undefined;
              await this.deps.durable?.();
            } catch (error) {
              recordFailure = error;
              throw error;
            }
            recorded = true;
          },
        },
      );
    } catch (error) {
      queued.over();
      // The attempt could not be recorded, so it was not sent: the store's error, as it is.
      if (recordFailure !== undefined) throw recordFailure;
      if (!recorded) throw error;
      if (!changedNothing(error)) throw new RunStartUnknown({ cause: error });
      await turns.recordRunNotStarted(turn.id);
      throw error;
    } finally {
      waits.detach();
    }
  }
}

/**
 * A signal that follows `source` (the turn's waits: a stop, a shutdown) until `detach()`:
 * the start's wait in the budget ends with it, the request once sent does not.
 */
function untilSent(source: AbortSignal): { signal: AbortSignal; detach(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort(source.reason);
  if (source.aborted) abort();
  else source.addEventListener("abort", abort, { once: true });
  return {
    signal: controller.signal,
    detach: () => source.removeEventListener("abort", abort),
  };
}

/**
 * The start's wait for the service's budget, shown once it has lasted SHOWN_WAIT_MS, and
 * every change after that; `over` once the start is sent or given up.
 */
function queuedShown(clock: Clock, show: (p: QueueInfo) => void) {
  let latest: QueueInfo | undefined;
  let shown = false;
  let cancel: (() => void) | undefined;
  return {
    told: (p: QueueInfo) => {
      latest = p;
      if (shown) show(p);
      else
        cancel ??= clock.timer(SHOWN_WAIT_MS, () => {
          shown = true;
          if (latest) show(latest);
        });
    },
    over: () => {
      cancel?.();
      cancel = undefined;
      latest = undefined;
      shown = false;
    },
  };
}
