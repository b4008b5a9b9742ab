import type { Turn } from "../../store/turn.js";
import type { Clock } from "../../time.js";
import type { Run } from "../ports.js";
import { throughOutage } from "./outage.js";
import type { Relay } from "./relay.js";
import type { StopReason, TurnLife } from "./turn-life.js";
import { callerOf, type StepContext } from "./turn-step.js";

/** How long a timed-out run may take to end after it was told to stop, ms (at most the timeout). */
const STOP_GRACE_MS = 10_000;

export interface RunFollowDeps {
  relay: Relay;
  clock: Clock;
  /** A run not ended after this long is stopped (and the reply says so), ms. */
  runTimeoutMs: number;
  /** Stops the turn (TurnRunner.stop), its failure logged. */
  stop: (life: TurnLife, reason: StopReason) => Promise<void>;
}

/**
 * The last step: follows the turn's run to its end status, showing the text as it is
 * written. The run's time limit counts from its recorded start, so a restart does not
 * give it a new allowance; past it the run is stopped, and if it does not end within a
 * grace period, following is abandoned. `halt` ends following too (the run's start could not
 * be recorded).
 */
export function runFollow(deps: RunFollowDeps) {
  return async (turn: Turn, context: StepContext, halt?: AbortSignal): Promise<Run> => {
    const runId = turn.runId;
    if (runId === null) throw new Error(`turn ${turn.id} has no run to follow`);
    const { life } = context;
    const { clock, runTimeoutMs } = deps;
    const abandon = new AbortController();
    const follow = AbortSignal.any([abandon.signal, life.leaving, ...(halt ? [halt] : [])]);
    let cancelGiveUp = () => {};
    const caller = callerOf(context);
    const left = Math.max(0, (turn.runStartedAt ?? clock.now()) + runTimeoutMs - clock.now());
    const cancelTimeout = clock.timer(left, () => {
      void deps.stop(life, { kind: "time_limit" });
      cancelGiveUp = clock.timer(Math.min(STOP_GRACE_MS, runTimeoutMs), () => abandon.abort());
    });
    try {
      return await throughOutage(
        () =>
          deps.relay.follow(runId, {
            ...caller,
            signal: follow,
            onText: (text) => life.reply.write(text),
            onStep: (step) => life.reply.step(step),
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

/** Aborts when either does: the turn's waits (a stop) or following (a leave, the time limit). */
function anyOf(waits: AbortSignal | undefined, follow: AbortSignal): AbortSignal {
  return waits ? AbortSignal.any([waits, follow]) : follow;
}
