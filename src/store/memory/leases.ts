import type { Immediate } from "../immediate.js";
import type { Claim, LeaseStore, TurnStore } from "../stores.js";

interface Lease {
  holder: string;
  expiresAt: number;
}

/** Conversation leases in a Map, beside the memory turns whose work they guard. */
export class MemoryLeaseStore implements Immediate<LeaseStore> {
  private readonly leases = new Map<number, Lease>();

  constructor(
    private readonly turns: Immediate<Pick<TurnStore, "unfinished">>,
    private readonly now: () => number = Date.now,
  ) {}

  claim(conversationId: number, holder: string, ttlMs: number): Claim {
    const current = this.leases.get(conversationId);
    const live = current !== undefined && current.expiresAt > this.now();
    if (live && current.holder !== holder) return "refused";
    this.leases.set(conversationId, { holder, expiresAt: this.now() + ttlMs });
    return current !== undefined && !live && current.holder !== holder ? "taken_over" : "claimed";
  }

  renew(holder: string, ttlMs: number): number[] {
    const held: number[] = [];
    for (const [id, lease] of this.leases) {
      if (lease.holder !== holder) continue;
      lease.expiresAt = this.now() + ttlMs;
      held.push(id);
    }
    return held.sort((a, b) => a - b);
  }

  release(conversationId: number, holder: string): void {
    if (this.leases.get(conversationId)?.holder === holder) this.leases.delete(conversationId);
  }

  releaseAll(holder: string): number {
    let released = 0;
    for (const [id, lease] of this.leases) {
      if (lease.holder !== holder) continue;
      this.leases.delete(id);
      released++;
    }
    return released;
  }

  unattended(limit: number): number[] {
    const ids = new Set<number>();
    for (const turn of this.turns.unfinished()) {
      const lease = this.leases.get(turn.conversationId);
      if (lease === undefined || lease.expiresAt <= this.now()) ids.add(turn.conversationId);
    }
    return [...ids].slice(0, limit);
  }

  heldBy(holder: string): number {
    let held = 0;
    for (const lease of this.leases.values()) {
      if (lease.holder === holder && lease.expiresAt > this.now()) held++;
    }
    return held;
  }
}
