import type { Turn } from "../../store/turn.js";
import type { Clock } from "../../time.js";
import type { Caller, Run } from "../ports.js";
import { throughOutage } from "./outage.js";
import type { Relay } from "./relay.js";
import { callerOf, type StepContext } from "./turn-step.js";

/** How long a timed-out run may take to end after it was told to stop, ms (at most the timeout). */
const STOP_GRACE_MS = 10_000;

export interface RunFollowDeps {
  relay: Relay;
  clock: Clock;
  /** A run not ended after this long is stopped (and the reply says so), ms. */
  runTimeoutMs: number;
  /** Asks the service to stop a run; resolves false when it could not. */
  stopRun: (runId: string, caller: Caller) => Promise<boolean>;
  /** Ends following for good: the bot is shutting down. */
  closing: AbortSignal;
}

/**
 * The last step: follows the turn's run to its end status, showing the text as it is
 * written. The run's time limit counts from its recorded start, so a restart does not
 * give it a new allowance; past it the run is stopped, and if it does not end within a
 * grace period, following is abandoned.
 */
export function runFollow(deps: RunFollowDeps) {
  return async (turn: Turn, context: StepContext): Promise<Run> => {
    const runId = turn.runId;
    if (runId === null) throw new Error(`turn ${turn.id} has no run to follow`);
    const { live } = context;
    const { clock, runTimeoutMs } = deps;
    const abandon = new AbortController();
    const follow = AbortSignal.any([abandon.signal, deps.closing, live.leaving.signal]);
    let cancelGiveUp = () => {};
    const caller = callerOf(context);
    const left = Math.max(0, (turn.runStartedAt ?? clock.now()) + runTimeoutMs - clock.now());
    const cancelTimeout = clock.timer(left, () => {
      live.timedOut = true;
      void deps.stopRun(runId, caller);
      cancelGiveUp = clock.timer(Math.min(STOP_GRACE_MS, runTimeoutMs), () => abandon.abort());
    });
    try {
      return await throughOutage(
        () =>
          deps.relay.follow(runId, {
            ...caller,
            signal: follow,
            onText: (text) => live.reply.write(text),
            onStep: (step) => live.reply.step(step),
          }),
        {
          ...context.outage,
          signal: anyOf(context.outage.signal, follow),
        },
      );
    } finally {
      cancelTimeout();
      cancelGiveUp();
    }
  };
}

/** Aborts when either does: the turn's waits (a stop) or following (shutdown, time limit). */
function anyOf(waits: AbortSignal | undefined, follow: AbortSignal): AbortSignal {
  return waits ? AbortSignal.any([waits, follow]) : follow;
}
