import { describe, expect, it, onTestFinished } from "vitest";
import { IN_HAND_MS } from "../../../src/budgets/postgres/ahead.js";
import { sharedBudgets } from "../../../src/budgets/postgres/shared-budgets.js";
import { GATHER_MS } from "../../../src/budgets/postgres/slots.js";
import { type BudgetTicket, ServiceBudget } from "../../../src/budgets/service/budget.js";
import { budgetUser } from "../../../src/service/credential.js";
import { ManualClock } from "../../support/manual-clock.js";
import { type Replica, replicas, written } from "../../support/shared-budgets.js";

const WINDOW = 60_000;
const TOKEN = "secret-token-never-stored";
const USER = budgetUser(TOKEN);

/**
 * Two ServiceBudgets, as two replicas' each, over one database; 20 run starts a minute. The
 * third is called once what the replicas posted (releases, pauses) must be in the database.
 */
async function twoBudgets(options: { lookAgainMs?: number } = {}) {
  const budget = ({ budgets }: Replica): ServiceBudget =>
    new ServiceBudget({
      runStartsPerMinute: 20,
      marginMs: 0,
      clock,
      windows: budgets.slotWindows,
    });
  const [a, b] = await replicas(2, options);
  // The clock moves on once what the replicas sent has landed (a round trip takes real time).
  const clock = new ManualClock(undefined, {
    settle: async () => {
      await written(a, b);
    },
  });
  return [budget(a), budget(b), clock] as const;
}

/** Which of `tickets` are ready by now. */
function readiness(tickets: BudgetTicket[]) {
  const ready = new Set<BudgetTicket>();
  for (const ticket of tickets) ticket.ready.then(() => ready.add(ticket));
  return () => tickets.filter((t) => ready.has(t));
}

describe("two ServiceBudgets sharing their slots in PostgreSQL", () => {
  it("share a token's 20 run starts a minute, each slot freed a window after its release", async () => {
    const [a, b, clock] = await twoBudgets();
    const take = (budget: ServiceBudget | undefined) =>
      Array.from({ length: 15 }, () => budget?.take(USER, "run_start") as BudgetTicket);
    // A asks first, B once A's slots are taken.
    const mine = take(a);
    const readyMine = readiness(mine);
    await clock.advance(0);
    const theirs = take(b);
    const readyTheirs = readiness(theirs);
    await clock.advance(0);
    expect([readyMine().length, readyTheirs().length]).toEqual([15, 5]);
    // The requests are answered a second later.
    await clock.advance(1_000);
    for (const ticket of [...readyMine(), ...readyTheirs()]) ticket.release();
    await clock.advance(WINDOW - 1);
    expect(readyTheirs()).toHaveLength(5);
    await clock.advance(1);
    expect(readyTheirs()).toHaveLength(15);
    // A's figures count the slots B holds: its own tickets are done, B's 10 are in flight.
    // (Read in the background: the figures are those of the reading the last look set off.)
    a.snapshot();
    await clock.advance(0);
    expect(a.snapshot()).toEqual([
      { user: USER, kind: "run_start", queued: 0, inFlight: 0, usedInWindow: 10 },
    ]);
  });

  it("keeps counting slots another replica holds, and looks again for their release", async () => {
    const [a, b, clock] = await twoBudgets({ lookAgainMs: 1_000 });
    const held = Array.from({ length: 20 }, () => a.take(USER, "run_start") as BudgetTicket);
    await clock.advance(0);
    const waiting = b.take(USER, "run_start") as BudgetTicket;
    const ready = readiness([waiting]);
    await clock.advance(5_500);
    // Released elsewhere at 5.5 s: seen at B's next look (6 s), free a window after release.
    for (const ticket of held) ticket.release();
    await clock.advance(WINDOW - 1);
    expect(ready()).toEqual([]);
    expect(waiting.position()).toBe(0);
    await clock.advance(1);
    expect(ready()).toEqual([waiting]);
  });

  it("pause every replica's tickets of a token on the service's 429", async () => {
    const [a, b, clock] = await twoBudgets();
    a.pauseUntil(USER, "request", clock.now() + 10_000);
    // The pause is in the database before B asks.
    await clock.advance(0);
    const ticket = b.take(USER, "request") as BudgetTicket;
    const ready = readiness([ticket]);
    await clock.advance(1);
    expect(ticket.expectedWaitMs()).toBe(9_999);
    await clock.advance(9_998);
    expect(ready()).toEqual([]);
    await clock.advance(1);
    expect(ready()).toEqual([ticket]);
    // Run starts were not paused.
    const start = b.take(USER, "run_start") as BudgetTicket;
    await clock.advance(0);
    expect(start.position()).toBe(0);
    expect(start.expectedWaitMs()).toBe(0);
  });

  it("keys each budget by the token's fingerprint, never the token", async () => {
    const [replica] = await replicas(1);
    const clock = new ManualClock(undefined, { settle: () => written(replica) });
    const budget = new ServiceBudget({ clock, windows: replica.budgets.slotWindows });
    budget.take(USER, "run_start");
    budget.pauseUntil(USER, "request", clock.now() + 1_000);
    await clock.advance(0);
    const keys = await replica.query<{ key: string }>(
      "SELECT key FROM budget_slots UNION ALL SELECT key FROM budget_pauses ORDER BY key",
    );
    expect(keys?.map((k) => k.key)).toEqual([
      `service:${USER}:request`,
      `service:${USER}:run_start`,
    ]);
    expect(JSON.stringify(keys)).not.toContain(TOKEN);
  });

  it("takes the slots of every waiting ticket in one statement, and lets go of those no longer wanted", async () => {
    const { replica, budget, clock, statements } = await counting("budget_take_slots");
    const tickets = Array.from({ length: 12 }, () => budget.take(USER, "request"));
    // Two leave while the slots are on their way: theirs are taken, and not kept.
    tickets[10]?.cancel();
    tickets[11]?.cancel();
    const staying = tickets.slice(0, 10);
    const ready = readiness(staying);
    await clock.advance(0);
    expect(ready()).toEqual(staying);
    // The first asked with as many ahead as may be held (19: 600 a minute's average over
    // IN_HAND_MS), which the eleven behind it found in hand; once half of those were spent,
    // as many more as make 19 ahead again.
    expect(statements()).toBe(2);
    expect(await counting_(replica, clock.now())).toBe(10 + 19);
    // Nobody wanted the 19 left in hand: they free, and the ten in flight still count.
    await clock.advance(IN_HAND_MS + 1);
    expect(await counting_(replica, clock.now())).toBe(10);
  });

  it("takes ahead as many slots as may be held, so that the next tickets go at once", async () => {
    const { replica, budget, clock, statements } = await counting("budget_take_slots");
    const burst = Array.from({ length: 30 }, () => budget.take(USER, "request"));
    const readyBurst = readiness(burst);
    await clock.advance(0);
    expect(readyBurst()).toHaveLength(30);
    // The first with 19 ahead; once half of those were spent, the ten they did not cover and 19
    // ahead again.
    expect(statements()).toBe(2);
    const next = Array.from({ length: 9 }, () => budget.take(USER, "request"));
    const readyNext = readiness(next);
    await new Promise((resolve) => setImmediate(resolve));
    // Their slots were in hand: they went without waiting for a statement, and those ahead were
    // made up again as they went.
    expect(readyNext()).toHaveLength(9);
    expect(statements()).toBe(3);
    // Those no ticket wanted are let go: only the 39 in flight are held.
    await clock.advance(IN_HAND_MS + 1);
    expect(await heldSlots(replica)).toEqual([{ n: 39 }]);
  });

  it("takes the slots of requests expected in one statement, and keeps them for those requests", async () => {
    const { replica, budget, clock, statements } = await counting("budget_take_slots");
    // 20 run starts a minute: none is taken ahead of a ticket unless it is expected.
    budget.expect(USER, "run_start", 3);
    await clock.advance(0);
    expect(statements()).toBe(1);
    expect(await heldSlots(replica)).toEqual([{ n: 3 }]);
    // The three come a second later and find their slots in hand, without another statement.
    await clock.advance(1_000);
    const starts = Array.from({ length: 3 }, () => budget.take(USER, "run_start"));
    const ready = readiness(starts);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ready()).toEqual(starts);
    expect(statements()).toBe(1);
  });

  it("lets go of the slots of requests expected that never came", async () => {
    const { replica, budget, clock } = await counting("budget_take_slots");
    budget.expect(USER, "run_start", 2);
    await clock.advance(0);
    await clock.advance(IN_HAND_MS + 1);
    expect(await heldSlots(replica)).toEqual([{ n: 0 }]);
  });

  it("gathers the releases of requests answered within a short while into one statement", async () => {
    const [replica] = await replicas(1);
    let statements = 0;
    // Its time moves only when told: nothing but it sends what is gathered.
    const clock = new ManualClock();
    const counted = sharedBudgets(
      async (text, params) => {
        if (text.includes("UPDATE budget_slots")) statements++;
        return replica.query(text, params);
      },
      { timer: (ms, fn) => clock.timer(ms, fn) },
    );
    onTestFinished(() => counted.settled());
    const budget = new ServiceBudget({ clock, windows: counted.slotWindows });
    const tickets = Array.from({ length: 10 }, () => budget.take(USER, "request"));
    await counted.settled();
    await Promise.all(tickets.map((ticket) => ticket.ready));
    for (const ticket of tickets.slice(0, 4)) ticket.release();
    await clock.advance(GATHER_MS - 1);
    for (const ticket of tickets.slice(4)) ticket.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(statements).toBe(0);
    await clock.advance(1);
    // The ten, as one statement, GATHER_MS after the first.
    expect(statements).toBe(1);
    await counted.settled();
    // The 19 taken ahead are held until it is clear nobody wants them.
    expect(await heldSlots(replica)).toEqual([{ n: 19 }]);
    await clock.advance(IN_HAND_MS + 1);
    await counted.settled();
    expect(await heldSlots(replica)).toEqual([{ n: 0 }]);
  });
});

/** How many slots are held (taken and not released), as the row the count is read in. */
function heldSlots(replica: Replica) {
  return replica.query<{ n: number }>("SELECT count(*)::int AS n FROM budget_slots WHERE held");
}

/** How many slots count at `now`. */
async function counting_(replica: Replica, now: number): Promise<number> {
  const rows = await replica.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM budget_slots WHERE until_at > $1",
    [now],
  );
  return rows?.[0]?.n ?? Number.NaN;
}

/** One replica's service budget, counting the statements whose text has `pattern`. */
async function counting(pattern: string) {
  const [replica] = await replicas(1);
  let statements = 0;
  const counted = sharedBudgets(async (text, params) => {
    if (text.includes(pattern)) statements++;
    return replica.query(text, params);
  });
  onTestFinished(() => counted.settled());
  const clock = new ManualClock(undefined, { settle: () => counted.settled() });
  const budget = new ServiceBudget({ clock, windows: counted.slotWindows });
  return { replica, budget, clock, statements: () => statements };
}
