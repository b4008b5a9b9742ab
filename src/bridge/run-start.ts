import type { RunSettings, SettingsStore, TurnStore } from "../store/stores.js";
import type { Turn } from "../store/turn.js";
import type { Clock } from "../time.js";
import { throughOutage } from "./outage.js";
import type { AssistantService } from "./ports.js";
import { serviceThreadOf } from "./thread-open.js";
import type { StepContext } from "./turn-step.js";

/**
 * The step that starts a turn's run on its posted message, with the person's settings for
 * the channel read when the start is sent (after any wait in the service budget, on every
 * attempt), and records the run, the settings sent and the moment it started.
 */
export class RunStart {
  constructor(
    private readonly deps: {
      service: AssistantService;
      turns: TurnStore;
      settings: SettingsStore;
      clock: Clock;
    },
  ) {}

  /** The turn unchanged (no run) when it was stopped while its start waited in the budget. */
  readonly step = async (turn: Turn, context: StepContext): Promise<Turn> => {
    if (turn.runId !== null || turn.serviceMessageId === null) return turn;
    const { service, turns, settings, clock } = this.deps;
    const { live } = context;
    const key = { team: turn.team, channel: turn.channel, user: turn.user };
    const triggerMessageId = turn.serviceMessageId;
    let sent: RunSettings = settings.get(key);
    let runId: string;
    try {
      const run = await throughOutage(
        () =>
          service.startRun(
            serviceThreadOf(context),
            () => {
              sent = settings.get(key);
              return { triggerMessageId, ...sent };
            },
            {
              party: context.party,
              signal: live.waits.signal,
              onQueued: (p) =>
                live.reply.status({ kind: "queued", ahead: p.position, where: "service" }),
            },
          ),
        context.outage,
      );
      runId = run.id;
    } catch (error) {
      // A stop aborts the wait in the budget: the start was never sent.
      if (live.stopped && live.waits.signal.aborted) return turn;
      throw error;
    }
    const started = turns.recordRunStart(turn.id, {
      runId,
      settings: sent,
      startedAt: clock.now(),
    });
    live.reply.status({ kind: "working" });
    return started;
  };
}
