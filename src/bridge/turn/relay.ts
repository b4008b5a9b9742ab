import { type Clock, settleWithin, systemClock } from "../../time.js";
import type { AssistantService, Caller, ReplyStep, Run, RunProgress, RunStatus } from "../ports.js";

const isEndStatus = (status: RunStatus): boolean =>
  status === "completed" || status === "failed" || status === "canceled";

export interface RelayOptions {
  /** Poll interval while following a run without a stream, ms; default 1_000 (interface §4). */
  pollIntervalMs?: number;
  /** How many times a stream that ended early is opened again before polling only; default 3. */
  streamReopens?: number;
  /**
   * A stream that says nothing useful (no text, status or run) for this long makes the relay
   * ask the run itself whether it has ended, ms; default 3_000. Keep-alive comments do not
   * count: a stalled stream must not hold back an answer that is ready.
   */
  streamCheckMs?: number;
  /** The poll interval's waits and the stream's silence check; default the system clock. */
  clock?: Clock;
}

/** For whom the run is followed: ports.ts Caller. */
export interface FollowOptions extends Caller {
  signal?: AbortSignal;
  /** Called with the whole text written so far, whenever it grows. */
  onText: (text: string) => void;
  /** Called once the run is being worked on (in_progress seen). */
  onStarted?: () => void;
  /**
   * Called with each step the stream reports as it begins or changes (the whole step; a
   * reopened stream may tell a known step again). Polling knows no steps.
   */
  onStep?: (step: ReplyStep) => void;
}

export class RunAbandoned extends Error {
  constructor() {
    super("Following the run was abandoned.");
    this.name = "RunAbandoned";
  }
}

/**
 * Follows a run to its end. The stream is for showing progress only; the truth is
 * `GET /v1/run/{id}` once it reports an end status (contract: Runs and the reply).
 * A stream that breaks, stalls or says nothing useful is reopened a few times and then
 * replaced by polling, which goes through the service budget like every other call.
 */
export class Relay {
  private readonly pollIntervalMs: number;
  private readonly streamReopens: number;
  private readonly streamCheckMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly service: AssistantService,
    {
      pollIntervalMs = 1_000,
      streamReopens = 3,
      streamCheckMs = 3_000,
      clock = systemClock,
    }: RelayOptions = {},
  ) {
    this.pollIntervalMs = pollIntervalMs;
    this.streamReopens = streamReopens;
    this.streamCheckMs = streamCheckMs;
    this.clock = clock;
  }

  async follow(runId: string, options: FollowOptions): Promise<Run> {
    const { signal } = options;
    let shown = "";
    let started = false;
    const showText = (text: string) => {
      if (!started) {
        started = true;
        options.onStarted?.();
      }
      if (text !== shown && text.length > 0) {
        shown = text;
        options.onText(text);
      }
    };
    const { party, workspace, threadOwner } = options;
    const callOpts = {
      ...(signal ? { signal } : {}),
      ...(party ? { party } : {}),
      ...(workspace ? { workspace } : {}),
      ...(threadOwner ? { threadOwner } : {}),
    };

    let streamsLeft = this.streamReopens + 1;
    for (;;) {
      if (signal?.aborted) throw new RunAbandoned();
      if (streamsLeft > 0) {
        streamsLeft--;
        const ended = await this.readStream(runId, callOpts, {
          showText,
          markStarted: () => {
            if (!started) {
              started = true;
              options.onStarted?.();
            }
          },
          showStep: (step) => options.onStep?.(step),
        });
        if (typeof ended === "object") return ended;
        if (ended) {
          const run = await this.service.getRun(runId, callOpts);
          if (isEndStatus(run.status)) return run;
        }
      }
      const run = await this.service.getRun(runId, callOpts);
      if (run.status === "in_progress" && !started) {
        started = true;
        options.onStarted?.();
      }
      if (isEndStatus(run.status)) return run;
      const partial = run.output?.[0]?.text;
      if (partial) showText(partial);
      if (streamsLeft === 0) await this.pause(this.pollIntervalMs, signal);
    }
  }

  /** Waits between polls; the caller giving up during the wait abandons the run. */
  private async pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.clock.sleep(ms, signal);
    } catch (error) {
      if (signal?.aborted) throw new RunAbandoned();
      throw error;
    }
  }

  /**
   * Reads one stream: true when it reported an end (so a GET should now be final), the run
   * when a look at it during a silence found it ended, false when the stream broke off.
   */
  private async readStream(
    runId: string,
    callOpts: Caller & { signal?: AbortSignal },
    shown: {
      showText: (text: string) => void;
      markStarted: () => void;
      showStep: (step: ReplyStep) => void;
    },
  ): Promise<boolean | Run> {
    const { showText, markStarted, showStep } = shown;
    const outer = callOpts.signal;
    // Closing our own signal ends the connection, and with it a read that may never return.
    const own = new AbortController();
    const signal = outer ? AbortSignal.any([outer, own.signal]) : own.signal;
    const updates = this.service.streamRun(runId, { ...callOpts, signal });
    let pending: Promise<IteratorResult<RunProgress>> | undefined;
    try {
      for (;;) {
        pending ??= updates.next();
        // The read stays pending through a silence: the next round waits on it again.
        const step = await settleWithin(pending, this.streamCheckMs, this.clock);
        if (step.state === "rejected") throw step.error;
        if (step.state === "pending") {
          const run = await this.service.getRun(runId, callOpts);
          if (isEndStatus(run.status)) return run;
          const partial = run.output?.[0]?.text;
          if (partial) showText(partial);
          continue;
        }
        pending = undefined;
        if (step.value.done) return false;
        const update = step.value.value;
        switch (update.type) {
          case "text":
            showText(update.text);
            break;
          case "status":
            if (update.status === "in_progress") markStarted();
            if (isEndStatus(update.status)) return true;
            break;
          case "run": {
            const text = update.run.output?.[0]?.text;
            if (text) showText(text);
            if (isEndStatus(update.run.status)) return true;
            break;
          }
          case "step":
            // A step is work on the run: it has started.
            markStarted();
            showStep(update.step);
            break;
          case "end":
            return update.reason === "done";
        }
      }
    } catch (error) {
      if (outer?.aborted) throw new RunAbandoned();
      // A broken stream is not a failed run: fall back to polling, which tells the truth.
      void error;
      return false;
    } finally {
      own.abort();
      pending?.catch(() => undefined);
      updates.return(undefined).catch(() => undefined);
    }
  }
}
