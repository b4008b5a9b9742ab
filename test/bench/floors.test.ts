import { describe, expect, it } from "vitest";
import { floorsFor, plan, SLACK_WAYS, type Ways } from "../../bench/floors.js";
import { RateLimits } from "../../tools/fake-slack/limits.js";

/** The workload of the outside comparison: ~1,500 characters at 200 a second in 4s. */
const comparison = {
  arrivalsPerSecond: 50,
  answerChars: 1_500,
  pieceChars: 4,
  piecesPerSecond: 50,
};
/** 375 pieces, 20 ms apart: the last one leaves 7.48 s after the first. */
const WRITING_MS = 374 * 20;
/** Posting and editing only, so that these figures stay put when the fake learns more methods. */
const POST_AND_EDIT: Ways = { create: ["chat.postMessage"], change: ["chat.update"] };
const fakeLimits = () => new RateLimits();

describe("Slack's floor for a workload", () => {
  it("lets one answer show at once and whole as soon as it is written", () => {
    const floors = floorsFor({ ...comparison, n: 1, channels: 1 }, fakeLimits, POST_AND_EDIT);
    expect(floors.firstTextMs).toEqual([0]);
    expect(floors.firstTextP95Ms).toBe(0);
    expect(floors.allShownMs).toBe(WRITING_MS);
    // 300 posts and 50 edits a minute: the text could follow within a piece or so.
    expect(floors.lagMaxMs).toBe(WRITING_MS / 351 - 20);
  });

  it("holds 50 new messages in one channel to a post a second after a burst of 3", () => {
    const floors = floorsFor({ ...comparison, n: 50, channels: 1 }, fakeLimits, POST_AND_EDIT);
    expect(floors.firstTextMs.slice(0, 4)).toEqual([0, 0, 0, 1_000 - 60]);
    // The 50th conversation, asked at 0.98 s, gets its message 47 s in.
    expect(floors.firstTextMs.at(-1)).toBe(47_000 - 980);
    expect(floors.firstTextP95Ms).toBeGreaterThan(43_000);
    expect(floors.firstTextP95Ms).toBeLessThan(45_000);
    expect(floors.allShownMs).toBe(47_000);
    expect(floors.lagMaxMs).toBe(47_000 - 980);
  });

  it("spreads the same 50 over 10 channels: 5 each, within two seconds", () => {
    const floors = floorsFor({ ...comparison, n: 50, channels: 10 }, fakeLimits, POST_AND_EDIT);
    expect(floors.firstTextP50Ms).toBe(0);
    expect(Math.max(...floors.firstTextMs)).toBeLessThan(2_000);
    expect(floors.firstTextP95Ms).toBeGreaterThan(900);
    // The last answer is asked at 0.98 s and written 7.48 s later.
    expect(floors.allShownMs).toBe(980 + WRITING_MS);
    // 350 messages and edits a minute for 50 answers: 7 each while they are written.
    expect(floors.lagMaxMs).toBe(Math.max(WRITING_MS / 8 - 20, ...floors.firstTextMs));
  });

  it("follows the fake's tiers: with 10 posts a minute, the eleventh answer waits a minute", () => {
    const fewPosts = () => new RateLimits({ limits: { "chat.postMessage": 10 } });
    const floors = floorsFor({ ...comparison, n: 11, channels: 11 }, fewPosts, POST_AND_EDIT);
    expect(floors.firstTextMs.slice(0, 10).every((ms) => ms === 0)).toBe(true);
    expect(floors.firstTextMs[10]).toBe(60_000 - 200);
    expect(floors.allShownMs).toBe(60_000);
  });

  it("counts only the methods the fake knows", () => {
    const unknown: Ways = { create: ["chat.postMessage", "chat.madeUp"], change: [] };
    const floors = floorsFor({ ...comparison, n: 50, channels: 1 }, fakeLimits, unknown);
    expect(floors.firstTextMs.at(-1)).toBe(47_000 - 980);
    // By default every way Slack has counts: never a later floor than posting alone gives.
    const all = floorsFor({ ...comparison, n: 50, channels: 1 }, fakeLimits, SLACK_WAYS);
    expect(all.firstTextP95Ms).toBeLessThanOrEqual(floors.firstTextP95Ms);
  });

  it("plans calls first come first served by any method the limits allow", () => {
    const limits = new RateLimits({ limits: { "users.info": 1, "auth.test": 1 } });
    const calls = [0, 0, 0].map((readyAt) => ({ readyAt, channel: "C1" }));
    // Two methods, one call each a minute: the third call waits for a window to slide.
    expect(plan(limits, ["users.info", "auth.test"], calls, 1_000)).toEqual([0, 0, 60_000]);
  });
});
