import { vi } from "vitest";
import type { EditTarget } from "../../src/slack/calls/pacer.js";

/** A fake `chat.update` for the pacer's tests, with the small tools those tests share. */

export interface Call {
  t: number;
  target: EditTarget;
  payload: string;
}

/** A fake `chat.update`: records every call; `outcome` may delay it or make it throw. */
export function fakeSender(
  outcome: (call: Call, index: number) => { latencyMs?: number; error?: unknown } = () => ({}),
) {
  const calls: Call[] = [];
  const live = new Map<string, number>();
  let maxLivePerMessage = 0;
  const send = async (target: EditTarget, payload: string): Promise<void> => {
    const call = { t: Date.now(), target, payload };
    const index = calls.push(call) - 1;
    const key = `${target.team}/${target.channel}/${target.ts}`;
    live.set(key, (live.get(key) ?? 0) + 1);
    maxLivePerMessage = Math.max(maxLivePerMessage, live.get(key) ?? 0);
    try {
      const { latencyMs = 0, error } = outcome(call, index);
      if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
      if (error !== undefined) throw error;
    } finally {
      live.set(key, (live.get(key) ?? 1) - 1);
    }
  };
  return {
    send,
    calls,
    maxLivePerMessage: () => maxLivePerMessage,
    of: (ts: string, team = "T1") =>
      calls.filter((c) => c.target.ts === ts && c.target.team === team),
  };
}

export const msg = (ts: string, team = "T1", channel = "C1"): EditTarget => ({ team, channel, ts });

/** Promise state without waiting for it. */
export function track(promise: Promise<void>) {
  const state: { settled: boolean; error?: unknown } = { settled: false };
  promise.then(
    () => {
      state.settled = true;
    },
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return state;
}

/** Gives an edit whose outcome the test does not look at. */
export const fire = (promise: Promise<void>) => void promise.catch(() => undefined);

export const tick = () => vi.advanceTimersByTimeAsync(0);
