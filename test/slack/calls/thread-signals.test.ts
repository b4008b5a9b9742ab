import { WebAPIPlatformError, WebAPIRateLimitedError } from "@slack/web-api";
import { afterEach, describe, expect, it } from "vitest";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";
import {
  ThreadSignals,
  type ThreadSignalsOptions,
} from "../../../src/slack/calls/thread-signals.js";
import { ManualClock } from "../../support/manual-clock.js";

type Status = { thread: string; status: string };

const policies: { close(): void }[] = [];
afterEach(() => {
  for (const policy of policies.splice(0)) policy.close();
});

/** A policy over a fake call on a manual clock; `fail` may make the i-th call throw. */
function setup(
  options: Partial<ThreadSignalsOptions<Status>> = {},
  fail?: (payload: Status, i: number) => unknown,
) {
  const clock = new ManualClock(0);
  const scheduler = new CallScheduler({ clock, random: () => 0.5 });
  const sent: { at: number; thread: string; status: string }[] = [];
  const failed: { status: string; workspaceWide: boolean }[] = [];
  let calls = 0;
  const signals = new ThreadSignals<Status>({
    scheduler,
    method: "assistant.threads.setStatus",
    perMinute: 60,
    burst: 2,
    send: async (payload) => {
      const error = fail?.(payload, calls++);
      if (error !== undefined) throw error;
      sent.push({ at: clock.now(), ...payload });
    },
    onFailed: (_error, payload, workspaceWide) =>
      failed.push({ status: payload.status, workspaceWide }),
    ...options,
  });
  policies.push(signals, scheduler);
  const set = (status: string, thread = "1.1", team = "T1") =>
    signals.set(team, thread, { thread, status });
  return { signals, clock, sent, failed, set, scheduler };
}

describe("thread signals", () => {
  it("sends only the newest value of a key, one call at a time", async () => {
    const { clock, sent, set } = setup();
    const first = set("queued");
    const results = [set("starting"), set("thinking"), set("writing")];
    await clock.advance(0);
    await clock.advance(0);
    expect(sent.map((s) => s.status)).toEqual(["writing"]);
    expect(await Promise.all([first, ...results])).toEqual([true, true, true, true]);
  });

  it("follows a value on its way with the newest one, never a stale one", async () => {
    const { clock, sent, set } = setup({}, () => undefined);
    void set("queued");
    await clock.advance(0);
    void set("thinking");
    void set("writing");
    await clock.advance(0);
    expect(sent.map((s) => s.status)).toEqual(["queued", "writing"]);
  });

  it("costs nothing when Slack already shows the value", async () => {
    const { clock, sent, set } = setup();
    await Promise.all([set("thinking"), clock.advance(0)]);
    expect(await set("thinking")).toBe(true);
    await clock.advance(1_000);
    expect(sent).toHaveLength(1);
  });

  it("spends its own budget per workspace: a burst, then its pace", async () => {
    const { clock, sent, set } = setup();
    for (const thread of ["a", "b", "c", "d"]) void set("thinking", thread);
    void set("thinking", "e", "T2");
    await clock.advance(0);
    expect(sent.map((s) => [s.thread, s.at])).toEqual([
      ["a", 0],
      ["b", 0],
      ["e", 0],
    ]);
    await clock.advance(2_000);
    expect(sent.map((s) => [s.thread, s.at])).toEqual([
      ["a", 0],
      ["b", 0],
      ["e", 0],
      ["c", 1_000],
      ["d", 2_000],
    ]);
  });

  it("sends the value again before Slack drops it by itself", async () => {
    const { clock, sent, set } = setup({
      refreshMs: (p) => (p.status === "" ? undefined : 100_000),
    });
    void set("thinking");
    await clock.advance(100_000);
    expect(sent.map((s) => [s.status, s.at])).toEqual([
      ["thinking", 0],
      ["thinking", 100_000],
    ]);
    void set("");
    await clock.advance(300_000);
    expect(sent.map((s) => [s.status, s.at])).toEqual([
      ["thinking", 0],
      ["thinking", 100_000],
      ["", 100_000],
    ]);
  });

  it("drops a value still waiting once Slack cleared the key, and refreshes nothing", async () => {
    const { clock, sent, set, signals } = setup({
      perMinute: 1,
      burst: 1,
      refreshMs: (p) => (p.status === "" ? undefined : 100_000),
    });
    void set("thinking");
    await clock.advance(0);
    // The budget is spent: this one waits, and the reply that clears the line comes first.
    const waiting = set("writing");
    signals.cleared("T1", "1.1");
    expect(await waiting).toBe(false);
    await clock.advance(300_000);
    expect(sent.map((s) => [s.status, s.at])).toEqual([["thinking", 0]]);
  });

  it("says when Slack cleared a key while a value was on its way (it may land after)", async () => {
    let land: () => void = () => undefined;
    const { signals, set, clock } = setup({
      send: () => new Promise<void>((resolve) => (land = resolve)),
    });
    expect(signals.cleared("T1", "1.1")).toBe(false);
    const landed = set("thinking");
    await clock.advance(0);
    expect(signals.cleared("T1", "1.1")).toBe(true);
    land();
    expect(await landed).toBe(true);
    expect(signals.cleared("T1", "1.1")).toBe(false);
  });

  it("waits out a 429, retries a 5xx twice, then lets the value go", async () => {
    const { clock, sent, failed, set } = setup({}, (_p, i) => {
      if (i === 0) return new WebAPIRateLimitedError(3);
      if (i >= 1 && i <= 3) return Object.assign(new Error("socket hang up"), { code: "x" });
      return undefined;
    });
    const landed = set("thinking");
    await clock.advance(2_999);
    expect(sent).toEqual([]);
    await clock.advance(30_000);
    expect(await landed).toBe(false);
    expect(failed).toEqual([{ status: "thinking", workspaceWide: false }]);
    expect(await Promise.all([set("writing"), clock.advance(1_000)])).toEqual([true, undefined]);
    expect(sent.map((s) => s.status)).toEqual(["writing"]);
  });

  it("stops calling in a workspace that refuses the method itself, and only there", async () => {
    const { clock, sent, failed, set } = setup({}, (_p, i) =>
      i === 0 ? new WebAPIPlatformError({ ok: false, error: "missing_scope" }) : undefined,
    );
    expect(await Promise.all([set("thinking"), clock.advance(0)])).toEqual([false, undefined]);
    expect(failed).toEqual([{ status: "thinking", workspaceWide: true }]);
    expect(await set("writing", "2.2")).toBe(false);
    expect(await Promise.all([set("writing", "2.2", "T2"), clock.advance(0)])).toEqual([
      true,
      undefined,
    ]);
    expect(sent.map((s) => [s.thread, s.status])).toEqual([["2.2", "writing"]]);
  });

  it("lets a refused value go without stopping the workspace", async () => {
    const { clock, failed, set, sent } = setup({}, (_p, i) =>
      i === 0 ? new WebAPIPlatformError({ ok: false, error: "invalid_thread_ts" }) : undefined,
    );
    expect(await Promise.all([set("thinking"), clock.advance(0)])).toEqual([false, undefined]);
    expect(failed).toEqual([{ status: "thinking", workspaceWide: false }]);
    await Promise.all([set("thinking", "2.2"), clock.advance(0)]);
    expect(sent.map((s) => s.thread)).toEqual(["2.2"]);
  });

  it("settles what waits as not landed when it closes", async () => {
    const { set, signals, scheduler } = setup();
    scheduler.close();
    expect(await set("thinking")).toBe(false);
    signals.close();
  });
});
