import type { Run } from "../service/schemas.js";
import type { SettingsStore } from "../store/settings.js";
import type { Turn, TurnStore } from "../store/turns.js";
import { type OutageOptions, throughOutage } from "./outage.js";
import type { AssistantService } from "./ports.js";

export interface RunStartDeps {
  service: AssistantService;
  turns: TurnStore;
  settings: SettingsStore;
  now: () => number;
}

/**
 * Starts a turn's run on its posted message, with the person's settings for the channel
 * read when the start is sent (after any wait in the service budget, on every attempt),
 * and records the run, the settings sent and the moment it started on the turn.
 */
export class RunStart {
  constructor(private readonly deps: RunStartDeps) {}

  /** The run's id; undefined when the turn was stopped while its start waited. */
  async start(
    turn: Turn,
    threadId: string,
    options: {
      outage: OutageOptions;
      signal: AbortSignal;
      party: string;
      stopped: () => boolean;
      onQueued: (ahead: number) => void;
    },
  ): Promise<string | undefined> {
    const { service, turns, settings } = this.deps;
    const key = { team: turn.team, channel: turn.channel, user: turn.user };
    let sent = settings.get(key);
    let run: Run;
    try {
      run = await throughOutage(
        () =>
          service.startRun(
            threadId,
            () => {
              sent = settings.get(key);
              return { triggerMessageId: turn.serviceMessageId as string, ...sent };
            },
            {
              party: options.party,
              signal: options.signal,
              onQueued: (p) => options.onQueued(p.position),
            },
          ),
        options.outage,
      );
    } catch (error) {
      // A stop aborts the wait in the budget: the start was never sent.
      if (options.stopped() && options.signal.aborted) return undefined;
      throw error;
    }
    turn.runId = run.id;
    turn.runStartedAt = this.deps.now();
    turns.update(turn.id, {
      runId: run.id,
      settings: sent,
      state: "run_started",
      runStartedAt: turn.runStartedAt,
    });
    return run.id;
  }
}
