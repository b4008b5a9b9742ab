import { describe, expect, it } from "vitest";
import { memoryStores } from "../../src/store/in-memory.js";
import { Retention, type RetentionOptions } from "../../src/store/retention.js";
import type { Stores } from "../../src/store/stores.js";
import { ManualClock } from "../support/manual-clock.js";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const KEY = { team: "T", channel: "C", threadTs: "1.1" };

/** Stores and a 30-day retention on a manual clock; the retention's log lines are kept. */
function setUp(options: Partial<RetentionOptions> = {}) {
  const clock = new ManualClock();
  const stores = memoryStores(() => clock.now());
  const lines: { level: string; fields: object; message: string }[] = [];
  const logger = {
    info: (fields: object, message: string) => lines.push({ level: "info", fields, message }),
    error: (fields: object, message: string) => lines.push({ level: "error", fields, message }),
  };
  const retention = new Retention({
    turns: stores.turns,
    retentionMs: 30 * DAY,
    clock,
    logger,
    ...options,
  });
  return { clock, stores, retention, lines };
}

/** A turn for the Slack message `ts`, finished at once unless `finished` is false. */
async function turn(stores: Stores, ts: string, finished = true): Promise<string> {
  const input = { assistant: "asst", ...KEY, messageTs: ts, user: "U1" };
  const created = (await stores.turns.record({ ...input, content: `question ${ts}`, notes: [] }))
    .turn;
  const id = created?.id as string;
  if (finished) await stores.turns.finish(id, { outcome: "completed" });
  return id;
}

const content = async (stores: Stores, id: string) => (await stores.turns.byId(id))?.content;

describe("the retention", () => {
  it("purges at start the texts of turns finished longer ago than the retention", async () => {
    const { clock, stores, retention } = setUp();
    const old = await turn(stores, "1.1");
    const unfinished = await turn(stores, "1.2", false);
    // A transition written in the millisecond of the one before it is recorded a millisecond
    // later (the row's version, for the store's compare-and-set): the finish is at 1 ms.
    await clock.advance(30 * DAY + 2);
    const recent = await turn(stores, "1.3");

    expect(await retention.start()).toBe(1);
    expect(await content(stores, old)).toBe("");
    expect(await content(stores, unfinished)).toBe("question 1.2");
    expect(await content(stores, recent)).toBe("question 1.3");
    await retention.stop();
  });

  it("sweeps again every hour on the clock, and not after it is stopped", async () => {
    const { clock, stores, retention, lines } = setUp();
    const first = await turn(stores, "1.1");
    expect(await retention.start()).toBe(0);
    await clock.advance(30 * DAY - HOUR);
    const second = await turn(stores, "1.2");
    expect(await content(stores, first)).toBe("question 1.1");

    // The sweep at 30 days after the first finished finds it not yet past; the next one does.
    await clock.advance(2 * HOUR);
    expect(await content(stores, first)).toBe("");
    expect(await content(stores, second)).toBe("question 1.2");
    expect(lines.map((line) => line.fields)).toEqual([expect.objectContaining({ purged: 1 })]);

    await retention.stop();
    expect(clock.pending).toBe(0);
    await clock.advance(31 * DAY);
    expect(await content(stores, second)).toBe("question 1.2");
  });

  it("purges a long history in batches, all of it in one sweep", async () => {
    const { clock, stores, retention } = setUp({ batchSize: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await turn(stores, `1.${i + 1}`));
    await clock.advance(31 * DAY);
    expect(await retention.start()).toBe(7);
    expect(await Promise.all(ids.map((id) => content(stores, id)))).toEqual(ids.map(() => ""));
    await retention.stop();
  });

  it("logs a failed sweep and tries again at the next one", async () => {
    let broken = true;
    // The store fails until `broken` is cleared (`stores` is set by the time it is called).
    const { clock, stores, retention, lines } = setUp({
      turns: {
        async purgeTexts(before: number, limit: number) {
          if (broken) throw new Error("disk I/O error");
          return await stores.turns.purgeTexts(before, limit);
        },
      },
    });
    const id = await turn(stores, "1.1");
    await clock.advance(31 * DAY);
    expect(await retention.start()).toBe(0);
    expect(lines).toEqual([
      { level: "error", fields: { err: "disk I/O error" }, message: expect.any(String) },
    ]);
    broken = false;
    await clock.advance(HOUR);
    expect(await content(stores, id)).toBe("");
    await retention.stop();
  });

  it("deletes feedback pressed longer ago than the retention, in batches, and keeps the rest", async () => {
    // `stores` is set by the time the retention sweeps.
    const { clock, stores, retention, lines } = setUp({
      feedback: { purge: async (before, limit) => await stores.feedback.purge(before, limit) },
      batchSize: 2,
    });
    for (const user of ["U1", "U2", "U3"])
      await stores.feedback.record("turn-old", user, "positive");
    await clock.advance(20 * DAY);
    await stores.feedback.record("turn-new", "U1", "negative");
    await clock.advance(10 * DAY + 1);

    await retention.start();
    expect(await stores.feedback.forTurn("turn-old")).toEqual([]);
    expect(await stores.feedback.forTurn("turn-new")).toHaveLength(1);
    expect(lines.map((line) => line.fields)).toEqual([expect.objectContaining({ feedback: 3 })]);
    await retention.stop();
  });
});
