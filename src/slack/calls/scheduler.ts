import type {
  Allowance,
  AllowanceRules,
  AllowanceScope,
  Allowances,
  QueuePlace,
} from "../../budgets/allowance.js";
import { localAllowances } from "../../budgets/local-allowances.js";
import { backoffMs, type Clock, systemClock } from "../../time.js";
import { classifyCallFailure } from "../web-api/call-failure.js";
import { Alarm } from "./alarm.js";
import { type Lane, type Lanes, type MethodBudget, notify } from "./lane.js";

export type { Lane, Lanes, MethodBudget } from "./lane.js";

export interface SchedulerOptions {
  /** Time for every budget, pause and backoff; default the system clock. */
  clock?: Clock;
  /** Jitter source of the backoff, in [0, 1); default Math.random. Tests pass a constant. */
  random?: () => number;
  /**
   * Where each workspace's budgets (per method, and per lane for the policies whose lanes
   * have a pace of their own) are kept; default this process's memory. Replicas pass budgets
   * kept in the database they share (budgets/postgres/), so that together they make no
   * more calls than one would, and a 429 met by one holds back all.
   */
  allowances?: Allowances;
}

/** No single backoff is longer, ms. */
const MAX_BACKOFF_MS = 30_000;

/**
 * Lanes idle long enough (Lane.expired: a minute and more) are looked for at most this often
 * per workspace, ms, on a pump: every pump looking at every lane was most of its cost.
 */
const SWEEP_MS = 1_000;

/**
 * A call whose lane's own pace is due within this long, ms, has the method's budget asked for
 * beside it (Allowance.ask): kept in a database, the pace's take is then on its way (its
 * readyAt says a moment later, budgets/postgres/ahead.ts), and the two round trips go side by
 * side rather than one after the other. A take of the method's budget is asked for every call
 * due that soon, in one statement.
 */
const ASK_BESIDE_MS = 250;

interface Method {
  name: string;
  budget: MethodBudget<Lane>;
  closed: boolean;
  landed: number;
  rateLimited: number;
}

interface Entry {
  lane: Lane;
  inFlight: boolean;
  /** A backoff, or a 429 that pauses only this lane: nothing goes before then. */
  notBefore: number;
  /**
   * The order the share's lanes were made in: of two ready lanes of equal rank the older goes
   * first, as it did when every pump went through the lanes in that order.
   */
  seq: number;
}

/** A method's allowance rules, without the policy's hooks. */
function rulesOf(budget: MethodBudget<Lane>): AllowanceRules {
  const { perMinute, burst, window } = budget;
  return window === undefined ? { perMinute, burst } : { perMinute, burst, window };
}

/** One method in one workspace. */
interface Share {
  method: Method;
  /** The method's budget in the workspace: a paced bucket, or a window (MethodBudget.window). */
  bucket: Allowance;
  /** A 429 that pauses the whole method: nothing of it goes before then. */
  pausedUntil: number;
  entries: Map<string, Entry>;
  /**
   * The lanes that had something to send, or a call in flight, when last asked, and those
   * woken since: a lane with nothing (Lane.readyAt undefined) is asked again only once it is
   * woken by its key, or the method without a key (`scanAll`).
   */
  active: Set<Entry>;
  /** A lane may have something new that is not in `active`: the next look asks every lane. */
  scanAll: boolean;
  /** Something of the method changed (a call given or settled, its budget): pumped next. */
  woken: boolean;
  /**
   * The instant the method needs a pump again if nothing changes (a lane or its budget ready,
   * a pause over): until then, and unless woken, a pump of the workspace leaves it alone.
   */
  dueAt: number;
  /** The next Entry.seq. */
  made: number;
}

interface Workspace {
  shares: Map<string, Share>;
  alarm: Alarm;
  pumpQueued: boolean;
  /** When expired lanes are looked for next (SWEEP_MS). */
  sweepAt: number;
}

/** What `first` found besides the lane: its place in the queue, when the next lane is ready. */
interface Found {
  rank: number;
  next: number;
  nextReady: number;
  /** Lanes ready now, the one found included; those sharing a pace count once. */
  ready: number;
  /** Lanes ready now or within ASK_BESIDE_MS, counted the same way. */
  soon: number;
}

/**
 * Hands out the Slack calls of every workspace from its budgets: per workspace a token bucket
 * (or a sliding window) per method, one alarm for the next instant anything can go, and one
 * pump that starts what can. A pump looks only at the methods woken since the last one or
 * due by now, and of their lanes at those with something to send (or woken), so that it
 * costs what changed, not every lane kept. Policies (the edit pacer, the post gate) register
 * a method and keep lanes; the scheduler keeps one call in flight per lane, pauses what a 429
 * concerns, and backs a lane off after transient failures.
 */
export class CallScheduler {
  readonly clock: Clock;
  private readonly random: () => number;
  private readonly allowances: Allowances;
  private readonly methods = new Map<string, Method>();
  private readonly workspaces = new Map<string, Workspace>();
  private closed = false;
  /** What the last `first` found (one object, not one per look). */
  private readonly found: Found = { rank: 0, next: 0, nextReady: 0, ready: 0, soon: 0 };

  constructor(options: SchedulerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.allowances = options.allowances ?? localAllowances;
  }

  /** Gives `name` its budget; one policy per method, so registering twice throws. */
  register<L extends Lane>(name: string, budget: MethodBudget<L>): Lanes<L> {
    if (this.methods.has(name)) throw new Error(`${name} already has a budget`);
    // Fail at registration, not at the first call (in memory: nothing is written anywhere).
    localAllowances({ team: "", method: name }, rulesOf(budget as MethodBudget<Lane>));
    const method: Method = {
      name,
      budget: budget as MethodBudget<Lane>,
      closed: this.closed,
      landed: 0,
      rateLimited: 0,
    };
    this.methods.set(name, method);
    return {
      get closed() {
        return method.closed;
      },
      get: (team, key, create) => {
        const share = this.share(team, method);
        let entry = share.entries.get(key);
        if (!entry) {
          entry = {
            lane: create(),
            inFlight: false,
            notBefore: Number.NEGATIVE_INFINITY,
            seq: share.made++,
          };
          share.entries.set(key, entry);
        }
        // Whoever gets a lane may give it something (and wake the method).
        share.active.add(entry);
        return entry.lane as L;
      },
      find: (team, key) =>
        this.workspaces.get(team)?.shares.get(name)?.entries.get(key)?.lane as L | undefined,
      all: () =>
        [...this.workspaces.values()]
          .flatMap((ws) => [...(ws.shares.get(name)?.entries.values() ?? [])])
          .map((e) => e.lane as L),
      wake: (team, key) => this.wake(team, name, key),
      counts: () => ({ landed: method.landed, rateLimited: method.rateLimited }),
      close: () => this.closeMethod(method),
    };
  }

  /**
   * How long a new call of `method` in workspace `team` would wait for the method's budget if
   * it were asked for now, ms (0: at once): the bucket, a 429 pause, and one token for each
   * lane already waiting. Read-only: nothing is taken or scheduled. A reply strategy reads it
   * to choose the way an answer is shown from what each method has left.
   */
  waitFor(team: string, method: string): number {
    if (!this.methods.has(method)) throw new Error(`${method} has no budget`);
    const share = this.workspaces.get(team)?.shares.get(method);
    if (!share) return 0;
    const now = this.clock.now();
    let waiting = 0;
    for (const entry of share.entries.values()) {
      if (!entry.inFlight && entry.lane.readyAt(now) !== undefined) waiting++;
    }
    const ready = Math.max(share.bucket.readyAt(now, waiting), share.pausedUntil);
    return Math.max(0, ready - now);
  }

  /**
   * The earliest instant at which a call of `method` in workspace `team` could have the
   * budget once `ahead` calls had it before (and a 429 pause is over): a policy reads it to
   * keep part of the budget for calls still to come. Read-only.
   */
  readyAfter(team: string, method: string, ahead: number, now: number): number {
    const share = this.workspaces.get(team)?.shares.get(method);
    if (!share) return now;
    return Math.max(share.bucket.readyAt(now, ahead), share.pausedUntil);
  }

  /**
   * A call of `method` in workspace `team` will be given within two seconds, though not yet:
   * its budget, kept in a database, takes for it ahead (Allowance.expect). Nothing else.
   */
  expect(team: string, method: string): void {
    const found = this.methods.get(method);
    if (!found || found.closed) return;
    this.share(team, found).bucket.expect?.(this.clock.now());
  }

  /**
   * The allowance of a lane with a pace of its own (a channel's posts), kept where the
   * workspaces' budgets are: a policy gives it to the lane, which takes from it in `take`.
   * `scope.method` is the policy's method: when the allowance changes (a take kept in a
   * database lands), that method's lanes are looked at again.
   */
  allowance(scope: Required<AllowanceScope>, rules: AllowanceRules): Allowance {
    return this.allowances(scope, rules, () => {
      // Only lanes with a call to make take from a pace: those `active` holds.
      const ws = this.workspaces.get(scope.team);
      const share = ws?.shares.get(scope.method);
      if (ws && share) this.schedule(ws, share);
    });
  }

  /** Stops every method; the workspaces' alarms are cleared. */
  close(): void {
    this.closed = true;
    for (const method of this.methods.values()) this.closeMethod(method);
    for (const ws of this.workspaces.values()) ws.alarm.clear();
  }

  private closeMethod(method: Method): void {
    if (method.closed) return;
    method.closed = true;
    for (const ws of this.workspaces.values()) {
      for (const entry of ws.shares.get(method.name)?.entries.values() ?? []) entry.lane.close();
      // The alarm may have been set for this method only: the pump sets it for the others.
      this.schedule(ws);
    }
  }

  /**
   * A lane of `method` in `team` has something new: `key`'s, or, without a key, any lane's
   * (all are asked). Only that method is pumped; nothing of a workspace without it.
   */
  private wake(team: string, method: string, key?: string): void {
    const ws = this.workspaces.get(team);
    const share = ws?.shares.get(method);
    if (!ws || !share) return;
    if (key === undefined) share.scanAll = true;
    else {
      const entry = share.entries.get(key);
      if (entry) share.active.add(entry);
    }
    this.schedule(ws, share);
  }

  private workspace(team: string): Workspace {
    const found = this.workspaces.get(team);
    if (found) return found;
    const alarm = new Alarm(() => this.pump(ws), this.clock);
    const ws: Workspace = {
      shares: new Map(),
      alarm,
      pumpQueued: false,
      sweepAt: Number.NEGATIVE_INFINITY,
    };
    this.workspaces.set(team, ws);
    return ws;
  }

  private share(team: string, method: Method): Share {
    const ws = this.workspace(team);
    const found = ws.shares.get(method.name);
    if (found) return found;
    const share: Share = {
      method,
      bucket: this.allowances({ team, method: method.name }, rulesOf(method.budget), () =>
        this.schedule(ws, share),
      ),
      pausedUntil: Number.NEGATIVE_INFINITY,
      entries: new Map(),
      active: new Set(),
      scanAll: false,
      woken: false,
      dueAt: Number.NEGATIVE_INFINITY,
      made: 0,
    };
    ws.shares.set(method.name, share);
    return share;
  }

  /**
   * Pumps once after the current tick, so that calls given together are ordered together;
   * `share`: the method whose lanes or budget changed (none: the alarm is only set again).
   */
  private schedule(ws: Workspace, share?: Share): void {
    if (this.closed) return;
    if (share) share.woken = true;
    if (ws.pumpQueued) return;
    ws.pumpQueued = true;
    void Promise.resolve().then(() => {
      ws.pumpQueued = false;
      this.pump(ws);
    });
  }

  /**
   * Starts whatever can go now, then sets the workspace's one alarm for the next instant. A
   * method neither woken nor due is left alone: until its `dueAt` nothing of it can go.
   */
  private pump(ws: Workspace): void {
    if (this.closed) return;
    const now = this.clock.now();
    // (A clock set back sweeps at once rather than a long while later.)
    if (now >= ws.sweepAt || now < ws.sweepAt - SWEEP_MS) this.sweep(ws, now);
    let next = Number.POSITIVE_INFINITY;
    for (const share of ws.shares.values()) {
      if (share.method.closed) continue;
      if (share.woken || now >= share.dueAt) {
        share.woken = false;
        share.dueAt = this.pumpShare(ws, share, now);
      }
      if (share.dueAt < next) next = share.dueAt;
    }
    if (next < Number.POSITIVE_INFINITY) ws.alarm.set(next);
    else ws.alarm.clear();
  }

  /** Lanes idle long enough are dropped, so that a long-running bot does not grow. */
  private sweep(ws: Workspace, now: number): void {
    ws.sweepAt = now + SWEEP_MS;
    for (const share of ws.shares.values()) {
      if (share.method.closed) continue;
      for (const key of share.entries.keys()) {
        const entry = share.entries.get(key) as Entry;
        if (!entry.inFlight && entry.lane.expired(now)) {
          share.entries.delete(key);
          share.active.delete(entry);
        }
      }
    }
  }

  /** Starts every call of one method that can go now; returns when the next one can. */
  private pumpShare(ws: Workspace, share: Share, now: number): number {
    for (;;) {
      if (now < share.pausedUntil) return share.pausedUntil;
      const best = this.first(share, now);
      const found = this.found;
      if (!best) {
        share.bucket.withdraw?.();
        // A take made for a lane that is refused after all is spent by the next ready call,
        // or let go unspent (ahead.ts).
        if (found.soon > 0) share.bucket.ask?.(now, found.soon);
        return found.nextReady;
      }
      const place: QueuePlace = { rank: found.rank, next: found.next, ready: found.ready };
      // A call made as it goes is made once the budget has room for it, before that is spent:
      // one with nothing to send after all gives its turn up.
      const room = best.lane.prepare && share.bucket.readyAt(now) <= now;
      if (room && !best.lane.prepare?.(now)) continue;
      if (!share.bucket.tryTake(now, place)) return share.bucket.readyAt(now);
      // A lane's own pace kept in a shared database may have been spent by another replica
      // since its readyAt: the call waits (the workspace's token is lost, rarely, in that race).
      if (best.lane.take && !best.lane.take(now)) continue;
      this.dispatch(ws, share, best, now);
    }
  }

  /**
   * The lane whose call goes first of those ready now (the lowest rank; of equal ranks the
   * oldest lane), and in `found` its place in this process's queue for the budget and when
   * the next lane not yet ready will be. Asks the lanes of `active` (every lane after a wake
   * without a key), and leaves out of it those with nothing to send.
   */
  private first(share: Share, now: number): Entry | undefined {
    let best: Entry | undefined;
    let rank = Number.POSITIVE_INFINITY;
    let next = Number.POSITIVE_INFINITY;
    let nextReady = Number.POSITIVE_INFINITY;
    let ready = 0;
    let soon = 0;
    // Those waiting for one pace they share (Lane.sharesPace) count once.
    let pacedReady = 0;
    let pacedSoon = 0;
    const { active } = share;
    const scanAll = share.scanAll;
    share.scanAll = false;
    for (const entry of scanAll ? share.entries.values() : active.values()) {
      if (entry.inFlight) {
        if (scanAll) active.add(entry);
        continue;
      }
      const wanted = entry.lane.readyAt(now);
      if (wanted === undefined) {
        active.delete(entry);
        continue;
      }
      if (scanAll) active.add(entry);
      const readyAt = Math.max(wanted, entry.notBefore);
      const paced = entry.lane.sharesPace?.() === true;
      if (readyAt <= now + ASK_BESIDE_MS) {
        if (paced) pacedSoon = 1;
        else soon++;
      }
      if (readyAt > now) {
        if (readyAt < nextReady) nextReady = readyAt;
        continue;
      }
      if (paced) pacedReady = 1;
      else ready++;
      const its = entry.lane.rank();
      if (!best || its < rank || (its === rank && entry.seq < best.seq)) {
        if (rank < next) next = rank;
        best = entry;
        rank = its;
      } else if (its < next) next = its;
    }
    const found = this.found;
    found.rank = rank;
    found.next = next;
    found.nextReady = nextReady;
    found.ready = ready + pacedReady;
    found.soon = soon + pacedSoon;
    return best;
  }

  private dispatch(ws: Workspace, share: Share, entry: Entry, now: number): void {
    entry.inFlight = true;
    let call: Promise<unknown>;
    try {
      call = entry.lane.start(now);
    } catch (error) {
      call = Promise.reject(error);
    }
    call.then(
      (value) => {
        entry.inFlight = false;
        share.method.landed++;
        entry.lane.landed(value, this.clock.now());
        this.schedule(ws, share);
      },
      (error: unknown) => {
        entry.inFlight = false;
        this.failed(ws, share, entry, error);
      },
    );
  }

  private failed(ws: Workspace, share: Share, entry: Entry, error: unknown): void {
    const { method } = share;
    if (method.closed) {
      entry.lane.abandoned(error);
      return;
    }
    const now = this.clock.now();
    const failure = classifyCallFailure(error);
    if (failure.kind === "rate_limited") {
      method.rateLimited++;
      const until = now + failure.retryAfterMs;
      // Shared budgets carry the pause to the other replicas too.
      if (method.budget.pauses === "lane") {
        entry.notBefore = Math.max(entry.notBefore, until);
        entry.lane.pauseUntil?.(until);
      } else {
        share.pausedUntil = Math.max(share.pausedUntil, until);
        share.bucket.pauseUntil?.(until);
      }
      notify(() => method.budget.onRateLimited?.(entry.lane, failure.retryAfterMs));
    }
    const retry = entry.lane.failed(failure, error, now);
    if (retry !== undefined) {
      const baseMs = method.budget.retryDelayMs ?? 1_000;
      const delay = backoffMs(retry, { baseMs, maxMs: MAX_BACKOFF_MS, random: this.random });
      entry.notBefore = Math.max(entry.notBefore, now + delay);
    }
    this.schedule(ws, share);
  }
}
