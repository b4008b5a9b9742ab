import type { Turn } from "../../store/turn.js";
import type { TurnReply } from "./turn-reply.js";

/**
 * A turn's life in this process, beside its record (store/turn.ts): what only memory knows,
 * as a state machine, so that the queue, the runner and every stop agree without asking the
 * store. The record says what was done; this says where the turn is here and why it stops.
 *
 *   from       to        when
 *   waiting    running   the runner takes it up (start)
 *   waiting    stopping  the runner takes it up after a stop was asked while it waited
 *   waiting    ended     a stop finds no run (stopWithoutRun), it is left, it was found finished
 *   running    stopping  a stop (a person, the time limit, a reply Slack will not show, an
 *                        uninstall): its run is stopped at the service, its ending says why
 *   running    leaving   it is left as stored (its lease was lost, or the bot shuts down):
 *   stopping   leaving   its waits and following end, nothing more is sent or written, and
 *                        whoever holds it next resumes it
 *   running, stopping, leaving → ended: the runner is done with it
 *
 * Any other move is a bug and throws IllegalLifeTransition. A stop or a leave of an ended
 * turn finds nothing to do and changes nothing (a press that comes while its ending shows).
 *
 * Stopping goes one way whatever asked: `TurnRunner.stop(life, reason)`, which calls `stop`
 * here and then does what the store and the service must.
 */
export type TurnStage = "waiting" | "running" | "stopping" | "leaving" | "ended";

/**
 * Why a turn stops. `person`: the Stop button, `/assistant stop`, Slack's own stop control,
 * or any of these through another replica (TurnStore.requestStop). `time_limit`: the run
 * outlived RUN_TIMEOUT_SECONDS. `unshown`: Slack would not show the reply. `uninstalled`: the
 * workspace removed the app. `lease_lost` and `shutdown` leave the turn as stored.
 */
export type StopReason =
  | { kind: "person"; user: string }
  | { kind: "time_limit" }
  | { kind: "unshown"; error: unknown }
  | { kind: "uninstalled"; error: unknown }
  | { kind: "lease_lost" }
  | { kind: "shutdown" };

/**
 * When several reasons come, the weightiest is kept (the first among equals): a leave over
 * any stop (nothing is ended here at all), then a reply nobody can see (the turn ends in an
 * error), then the time limit (the run was stopped for it, whoever asked before), a person.
 */
const WEIGHT: Record<StopReason["kind"], number> = {
  person: 1,
  time_limit: 2,
  unshown: 3,
  uninstalled: 3,
  lease_lost: 4,
  shutdown: 4,
};

const NEXT: Record<TurnStage, readonly TurnStage[]> = {
  waiting: ["running", "stopping", "ended"],
  running: ["stopping", "leaving", "ended"],
  stopping: ["leaving", "ended"],
  leaving: ["ended"],
  ended: [],
};

/** A move the state machine does not have: a bug in whoever asked for it. */
export class IllegalLifeTransition extends Error {
  constructor(
    readonly turnId: string,
    readonly from: TurnStage,
    readonly to: TurnStage,
  ) {
    super(`live turn ${turnId} is ${from}: it cannot become ${to}`);
    this.name = "IllegalLifeTransition";
  }
}

function leaves(reason: StopReason): boolean {
  return reason.kind === "lease_lost" || reason.kind === "shutdown";
}

export class TurnLife {
  private current: TurnStage = "waiting";
  private why: StopReason | undefined;
  private run: string | undefined;
  /** The stop sent to the service, while on its way or once taken (see `stopRun`). */
  private stopSent: Promise<boolean> | undefined;
  private readonly waitsController = new AbortController();
  private readonly leavingController = new AbortController();

  readonly id: string;
  readonly conversationId: number;
  /** Who asked: whom a stop of its run is sent for when its record cannot be read. */
  readonly asker: string;

  constructor(
    turn: Pick<Turn, "id" | "conversationId" | "user">,
    readonly reply: TurnReply,
  ) {
    this.id = turn.id;
    this.conversationId = turn.conversationId;
    this.asker = turn.user;
  }

  get stage(): TurnStage {
    return this.current;
  }

  /** Why it stops or is left; undefined while nothing asked. */
  get reason(): StopReason | undefined {
    return this.why;
  }

  /** The run at the service, once known. */
  get runId(): string | undefined {
    return this.run;
  }

  /**
   * Aborts the turn's waits (budget queue, thread read, outage backoff), never a request in
   * flight: when a stop finds no run, when Slack will not show the reply, when it is left.
   */
  get waits(): AbortSignal {
    return this.waitsController.signal;
  }

  /** Aborted when the turn is left as stored: following its run ends too. */
  get leaving(): AbortSignal {
    return this.leavingController.signal;
  }

  /** Asked to stop for a reason that ends it here (not left). */
  get stopped(): boolean {
    return this.why !== undefined && !leaves(this.why);
  }

  /** To be left as stored: no further step, no ending. */
  get left(): boolean {
    return this.why !== undefined && leaves(this.why);
  }

  /** The person who stopped it, when a person's stop is what it ends with. */
  get stoppedBy(): string | undefined {
    return this.why?.kind === "person" ? this.why.user : undefined;
  }

  get timedOut(): boolean {
    return this.why?.kind === "time_limit";
  }

  /** Why Slack cannot show the reply (it would not, or the app is gone), if so. */
  get unshown(): unknown {
    const why = this.why;
    return why?.kind === "unshown" || why?.kind === "uninstalled" ? why.error : undefined;
  }

  /** Taken up by the runner and not yet ended. */
  get underway(): boolean {
    return this.current === "running" || this.current === "stopping" || this.current === "leaving";
  }

  /**
   * The runner takes the turn up: `running`, or `stopping` if a stop was asked while it
   * waited. False when it is no longer waiting (stopped or left before its turn came, or
   * found finished); a turn is taken up once, so a second start throws.
   */
  start(runId: string | null): boolean {
    if (this.current === "ended") return false;
    if (this.current !== "waiting")
      throw new IllegalLifeTransition(this.id, this.current, "running");
    this.move(this.stopped ? "stopping" : "running");
    this.ran(runId);
    return true;
  }

  /** A step recorded the run: known from now on. */
  ran(runId: string | null): void {
    if (runId !== null) this.run ??= runId;
  }

  /**
   * Records why the turn stops and does what memory alone can: a leave aborts its waits and
   * its following (a waiting turn ends here at once); a reply nobody can see aborts its waits.
   * False when nothing more is to be done (it ended, or this is a leave); otherwise whoever
   * called goes on to stop its run, or to end it (TurnRunner.stop). A turn being left keeps
   * its leave, but its run is still stopped at the service when a person asks.
   */
  stop(reason: StopReason): boolean {
    if (this.current === "ended") return false;
    if (this.why === undefined || WEIGHT[reason.kind] > WEIGHT[this.why.kind]) this.why = reason;
    if (leaves(reason)) {
      if (this.current !== "leaving") this.move(this.current === "waiting" ? "ended" : "leaving");
      this.waitsController.abort();
      this.leavingController.abort();
      return false;
    }
    if (this.current === "running") this.move("stopping");
    if (this.unshown !== undefined) this.waitsController.abort();
    return true;
  }

  /**
   * A stop found no run at the service: a turn still waiting ends now (true: the stop writes
   * its ending, and the runner will not take it up); one taken up has its waits aborted, so
   * its runner ends it at its next step.
   */
  stopWithoutRun(): boolean {
    if (this.current === "waiting") {
      this.move("ended");
      return true;
    }
    if (this.current !== "ended") this.waitsController.abort();
    return false;
  }

  /** The runner is done with it (or found it finished before taking it up). */
  end(): void {
    this.move("ended");
  }

  /**
   * Stops the run at the service with `send`, once: a second press (the Stop button and
   * Slack's own stop, a redelivered event, the time limit after a person) joins the stop on
   * its way or taken, and sends nothing. A stop the service did not take is forgotten, so a
   * later press may try again.
   */
  stopRun(send: () => Promise<boolean>): Promise<boolean> {
    this.stopSent ??= send().then(
      (taken) => {
        if (!taken) this.stopSent = undefined;
        return taken;
      },
      (error: unknown) => {
        this.stopSent = undefined;
        throw error;
      },
    );
    return this.stopSent;
  }

  private move(to: TurnStage): void {
    if (!NEXT[this.current].includes(to))
      throw new IllegalLifeTransition(this.id, this.current, to);
    this.current = to;
  }
}
