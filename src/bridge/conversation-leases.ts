import type { Claim, ClaimRead, LeaseStore } from "../store/stores.js";
import type { Turn } from "../store/turn.js";
import type { Clock } from "../time.js";
import type { BridgeLogger } from "./ports.js";

export interface LeaseOptions {
  /** This process among the replicas sharing the database. */
  holder: string;
  /** How long a lease lasts unless renewed, ms: a dead replica's work waits this long. */
  ttlMs: number;
  /** How often unattended work (a dead replica's, or a turn nobody claimed) is looked for, ms. */
  sweepMs: number;
  clock: Clock;
  logger: BridgeLogger;
}

export interface LeaseHooks {
  /** A conversation nobody holds has unfinished turns: claim it and run them. */
  attend(conversationId: number): Promise<void>;
  /**
   * The conversations this process holds may have turns recorded by another replica: run what
   * is new (one read for all of them).
   */
  recheck(conversationIds: number[]): Promise<void>;
  /** The lease of a conversation this process held is gone: its turns must stop here. */
  lost(conversationId: number): void;
  /** A conversation was taken over from a replica whose lease had expired (metrics). */
  takenOver?(conversationId: number): void;
}

/** At most this many unattended conversations are claimed per sweep. */
const SWEEP_LIMIT = 100;

/**
 * The leases this process holds on conversations (store/stores.ts: LeaseStore), kept alive
 * while it works on them: renewed every third of their lifetime, swept for work nobody holds,
 * handed back when it stops. A renewal that fails for a whole lifetime (the database out of
 * reach) counts every lease as lost, since another replica may already have taken them.
 */
export class ConversationLeases {
  private readonly held = new Set<number>();
  private renewedAt: number;
  private cancelRenew: (() => void) | undefined;
  private cancelSweep: (() => void) | undefined;
  /** A renewal or a sweep under way: a timer that fires meanwhile skips its turn. */
  private renewing = false;
  private sweeping = false;
  /** The leases were handed back: one a record takes from now on is given back too. */
  private handedBack = false;

  constructor(
    private readonly store: LeaseStore,
    private readonly options: LeaseOptions,
    private readonly hooks: LeaseHooks,
  ) {
    this.renewedAt = options.clock.now();
  }

  /**
   * Whether this process holds (or now took) the conversation's lease. The store's claim is
   * one conditional upsert: of two replicas claiming at once, one wins.
   */
  async claim(conversationId: number): Promise<boolean> {
    if (this.held.has(conversationId)) return true;
    const { holder, ttlMs } = this.options;
    return this.took(conversationId, await this.store.claim(conversationId, holder, ttlMs));
  }

  /**
   * Claims (or renews) the conversation's lease and reads, with the same round trip, what its
   * holder reads first (LeaseStore.claimReading); undefined when another replica holds it.
   */
  async claimReading(conversationId: number): Promise<Omit<ClaimRead, "claim"> | undefined> {
    const { holder, ttlMs } = this.options;
    const { claim, ...read } = await this.store.claimReading(conversationId, holder, ttlMs);
    return this.took(conversationId, claim) ? read : undefined;
  }

  /** What a question's record asks for to take its conversation's lease (NewQuestion.lease). */
  get forRecord(): { holder: string; ttlMs: number } {
    return { holder: this.options.holder, ttlMs: this.options.ttlMs };
  }

  /**
   * A question's record took the conversation's lease in its own write (TurnStore.record):
   * held from now on, as after a claim. After the leases were handed back (a shutdown) it is
   * given back at once, with any other left to this holder.
   */
  adopt(conversationId: number): void {
    if (!this.handedBack) {
      this.held.add(conversationId);
      return;
    }
    this.store.releaseAll(this.options.holder).catch((error: unknown) => {
      this.options.logger.warn({ err: String(error) }, "could not give a lease back");
    });
  }

  /** Whether `claim` holds the conversation for this process now (and so, from now on, `holds`). */
  private took(conversationId: number, claim: Claim): boolean {
    if (claim === "refused") return false;
    this.held.add(conversationId);
    if (claim === "taken_over") {
      this.options.logger.info({ conversation: conversationId }, "conversation taken over");
      this.hooks.takenOver?.(conversationId);
    }
    return true;
  }

  holds(conversationId: number): boolean {
    return this.held.has(conversationId);
  }

  /**
   * Gives the lease back unless the conversation has unfinished turns (LeaseStore.releaseIfDone):
   * those turns, the lease kept; none when it was given back. `holds` says no while the store
   * is asked (a renewal answered meanwhile does not count it lost), and yes again if it is kept.
   */
  async releaseIfDone(conversationId: number): Promise<Turn[]> {
    if (!this.held.delete(conversationId)) return [];
    const left = await this.store.releaseIfDone(conversationId, this.options.holder);
    if (left.length > 0) this.held.add(conversationId);
    return left;
  }

  get count(): number {
    return this.held.size;
  }

  /** Starts renewing and sweeping; the first sweep runs now (work left by a previous start). */
  async start(): Promise<void> {
    await this.sweep();
    this.armRenew();
    this.armSweep();
  }

  /** Stops renewing and sweeping, and hands every lease back for another replica to take. */
  handBack(): Promise<number> {
    this.handedBack = true;
    this.cancelRenew?.();
    this.cancelSweep?.();
    this.held.clear();
    return this.store.releaseAll(this.options.holder);
  }

  /**
   * Claims what nobody works on, oldest waiting first, and looks again at what this process
   * holds (a turn recorded by another replica while the holder's queue was not draining).
   */
  async sweep(): Promise<void> {
    const unattended = await this.store.unattended(SWEEP_LIMIT);
    const attending = unattended
      .filter((id) => !this.held.has(id))
      .map((id) => this.hooks.attend(id));
    const rechecking = this.held.size > 0 ? [this.hooks.recheck([...this.held])] : [];
    await Promise.all([...attending, ...rechecking]);
  }

  private armRenew(): void {
    const { clock, ttlMs } = this.options;
    this.cancelRenew = clock.timer(Math.max(1, Math.floor(ttlMs / 3)), () => {
      if (!this.renewing) {
        this.renewing = true;
        void this.renew().finally(() => {
          this.renewing = false;
        });
      }
      this.armRenew();
    });
  }

  private armSweep(): void {
    this.cancelSweep = this.options.clock.timer(this.options.sweepMs, () => {
      if (!this.sweeping) {
        this.sweeping = true;
        void this.guarded("sweep", () => this.sweep()).finally(() => {
          this.sweeping = false;
        });
      }
      this.armSweep();
    });
  }

  /**
   * Renews every lease held; one the store no longer has for this holder is lost. Only the
   * leases held when the renewal was sent are judged by its answer: one claimed while it was
   * on its way is not in it, and not lost.
   */
  private async renew(): Promise<void> {
    const { clock, holder, ttlMs } = this.options;
    const asked = [...this.held];
    let kept: Set<number>;
    try {
      kept = new Set(await this.store.renew(holder, ttlMs));
      this.renewedAt = clock.now();
    } catch (error) {
      this.options.logger.warn({ err: String(error) }, "could not renew conversation leases");
      if (clock.now() - this.renewedAt < ttlMs) return;
      kept = new Set();
    }
    for (const id of asked) {
      if (kept.has(id) || !this.held.has(id)) continue;
      this.held.delete(id);
      this.options.logger.warn({ conversation: id }, "conversation lease lost");
      this.hooks.lost(id);
    }
  }

  private async guarded(what: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.options.logger.warn({ err: String(error), what }, "conversation leases");
    }
  }
}
