import { WebAPIRateLimitedError } from "@slack/web-api";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type EditTarget, Pacer } from "../../src/slack/calls/pacer.js";

const T0 = 1_000_000;
const TIER3_PER_MINUTE = 50;

/** A small deterministic PRNG (mulberry32), so the simulation is the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** `chat.update` as Slack limits it: at most 50 accepted calls per workspace in any 60 s. */
function tier3Slack(rand: () => number) {
  const accepted = new Map<string, number[]>();
  const lastPayload = new Map<string, string>();
  let rejected = 0;
  const send = async (target: EditTarget, payload: string): Promise<void> => {
    const now = Date.now();
    const times = (accepted.get(target.team) ?? []).filter((t) => t > now - 60_000);
    accepted.set(target.team, times);
    if (times.length >= TIER3_PER_MINUTE) {
      rejected++;
      throw new WebAPIRateLimitedError(Math.ceil(((times[0] ?? now) + 60_000 - now) / 1_000));
    }
    times.push(now);
    await new Promise((r) => setTimeout(r, 50 + Math.floor(rand() * 350)));
    lastPayload.set(target.ts, payload);
  };
  return { send, lastPayload, rejected: () => rejected };
}

interface Reply {
  ts: string;
  endsAt: number;
  chunks: number;
  finalGivenAt?: number;
  landedAt?: number;
  error?: unknown;
}

let pacer: Pacer<string> | undefined;
beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  pacer?.close();
  vi.useRealTimers();
});

describe("Pacer against Slack's Tier 3 limit", () => {
  it("runs 50 concurrent streaming replies for 10 minutes with no 429 and every final delivered", async () => {
    const rand = random(42);
    const slack = tier3Slack(rand);
    const p = new Pacer<string>(slack.send);
    pacer = p;
    const replies: Reply[] = [];
    const slots: (Reply | undefined)[] = Array.from({ length: 50 }, () => undefined);
    const startReply = (now: number): Reply => {
      const reply = {
        ts: `r${replies.length}`,
        endsAt: now + 60_000 + rand() * 180_000,
        chunks: 0,
      };
      replies.push(reply);
      return reply;
    };
    const step = 250;
    for (let now = 0; now < 14 * 60_000; now += step) {
      for (let i = 0; i < slots.length; i++) {
        let reply = slots[i];
        if (!reply) {
          if (now >= 10 * 60_000) continue;
          reply = startReply(now);
          slots[i] = reply;
        }
        const target = { team: "T1", channel: `C${i % 7}`, ts: reply.ts };
        if (now < reply.endsAt) {
          reply.chunks++;
          p.edit(target, `${reply.ts}: ${reply.chunks} chunks`).catch(() => undefined);
          continue;
        }
        const r = reply;
        r.finalGivenAt = now;
        p.edit(target, `${r.ts}: final`, { final: true }).then(
          () => {
            r.landedAt = Date.now() - T0;
          },
          (error: unknown) => {
            r.error = error;
          },
        );
        slots[i] = undefined;
      }
      await vi.advanceTimersByTimeAsync(step);
    }

    expect(replies.length).toBeGreaterThan(150);
    expect(slack.rejected()).toBe(0);
    expect(p.stats()).toMatchObject({ pending: 0, inFlight: 0, rateLimited: 0 });
    let slowestFinal = 0;
    for (const r of replies) {
      expect(r.error).toBeUndefined();
      expect(r.landedAt).toBeDefined();
      expect(slack.lastPayload.get(r.ts)).toBe(`${r.ts}: final`);
      slowestFinal = Math.max(slowestFinal, (r.landedAt ?? 0) - (r.finalGivenAt ?? 0));
    }
    // Finals go first: none waits long for the budget.
    expect(slowestFinal).toBeLessThan(10_000);
    // The budget is used, not wasted: close to 40 edits a minute while replies stream.
    expect(p.stats().sent).toBeGreaterThan(10 * 40);
  });
});
