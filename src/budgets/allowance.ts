/**
 * What a rate budget is to whoever spends it (the Slack call scheduler, a channel's lane): the
 * two questions a token bucket and a sliding window both answer, kept in this process's
 * memory or, with several replicas, in the database they share.
 */
export interface Allowance {
  /**
   * The earliest instant (ms, the clock of `now`) at which a take can succeed, once `ahead`
   * takes (default 0) have gone before it. Read-only.
   */
  readyAt(now: number, ahead?: number): number;
  /**
   * Takes one if allowed at `now`; false (and nothing taken) otherwise. `place` says where the
   * call stands among this process's calls waiting for the budget: an allowance shared by
   * replicas lets the call whose rank is lowest in any of them go first (one in memory has
   * no one else's to weigh it against).
   */
  tryTake(now: number, place?: QueuePlace): boolean;
  /**
   * Takes one at `now` and says whether it did, asking the database itself when the allowance
   * is kept there (a round trip, awaited): for a choice that can wait for it, where a take
   * made ahead would come too late (which way an answer is shown). One in memory needs none:
   * tryTake answers.
   */
  takeNow?(now: number): Promise<boolean>;
  /**
   * `count` calls (default 1) will soon want this allowance, and others before them: one kept
   * in a database asks for that many takes ahead, in one statement (budgets/postgres/ahead.ts),
   * so that readyAt says now once it has them and tryTake answers from them. One in memory
   * needs none.
   */
  ask?(now: number, count?: number): void;
  /**
   * A call will want this allowance within two seconds (a reply's first message, once its
   * first words are written), though none waits for it yet: one kept in a database takes for
   * it ahead, with the takes of other calls expected, so that the call finds its take in hand
   * when it comes rather than a round trip later. One in memory needs none.
   */
  expect?(now: number): void;
  /**
   * A 429 said to wait until `until`: no take succeeds before then, and readyAt says so. Only a
   * shared allowance needs it, so that a 429 met by one replica holds every replica back; in
   * one process the scheduler keeps the pause itself.
   */
  pauseUntil?(until: number): void;
  /**
   * No call of this process waits for it now (its last one went elsewhere or away): a shared
   * allowance stops holding other replicas' calls back for it. Cheap to call when nothing
   * changed.
   */
  withdraw?(): void;
}

/** A waiting call's place in its process's queue for a budget (Lane.rank). */
export interface QueuePlace {
  /** The rank of the call asking: the lowest goes first. */
  rank: number;
  /** The rank of the process's next waiting call once this one has gone; Infinity: none. */
  next: number;
  /**
   * How many of the process's calls are ready for the budget now, this one included; default
   * 1. A budget kept in a database takes up to that many in one statement, for the calls
   * after it.
   */
  ready?: number;
}

/** A method's budget in one workspace, or a lane's own pace. */
export interface AllowanceRules {
  /** Sustained takes per minute (> 0); with `window`, takes in any 60 s. */
  perMinute: number;
  /** Takes that may go back to back (>= 1); unused with `window`. */
  burst: number;
  /** A sliding window of a minute with no pace inside it, instead of a token bucket. */
  window?: boolean;
}

/** Whose budget: a method in a workspace, or one lane of it (a channel's posts). */
export interface AllowanceScope {
  team: string;
  method: string;
  /** The lane (a channel, a message) with a pace of its own; absent: the workspace's. */
  lane?: string;
}

/**
 * Makes the allowance of a scope; called again for a scope whose lane was forgotten.
 * `changed`: an allowance kept in a database takes one round trip ahead of the call
 * (budgets/postgres/ahead.ts), so its tryTake answers false while the take is on its way;
 * it calls `changed` when the take lands, for the spender to ask again. One in memory never
 * calls it.
 */
export type Allowances = (
  scope: AllowanceScope,
  rules: AllowanceRules,
  changed?: () => void,
) => Allowance;
