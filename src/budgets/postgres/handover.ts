import type { BudgetQuery } from "./budget-db.js";

/*
 * What passes between a lone replica's budgets, kept in its memory, and the tables replicas
 * share (solo.ts): the tables are read into memory when a replica is left alone, and what it
 * spent alone is written to them when another replica comes. The tables are those of
 * bucket.ts, slots.ts and pauses.ts, with their meanings.
 */

/** What the tables say of one key, from an instant on. */
export interface Seed {
  /** The bucket's arrival time; FULL (-Infinity) when it is not ahead of the instant. */
  arrival: number;
  /** Until when each of the key's slots counts (held or not), ascending, all after the instant. */
  untilAt: number[];
  /** Until when a 429 pauses the key; -Infinity: no pause. */
  pausedUntil: number;
}

export const NO_SEED: Seed = {
  arrival: Number.NEGATIVE_INFINITY,
  untilAt: [],
  pausedUntil: Number.NEGATIVE_INFINITY,
};

/**
 * What one budget kept in memory has spent that still counts, to be written to the tables. A
 * write that fails is tried again with the same: its held slots are written once, the rest
 * may count twice (which only holds calls back, for a minute at most).
 */
export interface Spent {
  key: string;
  /** A token bucket's arrival time, when it is ahead of now. */
  arrival?: number;
  /** Slots that count until each of these instants (a window's takes, released requests). */
  untilAt: number[];
  /** Slots held by requests still on their way: written held, their ids told to `carried`. */
  held?: { count: number; untilAt: number; carried(ids: number[]): void } | undefined;
  /** A 429's pause, when it is ahead of now. */
  pausedUntil?: number;
}

/** The keys' state in the tables that still counts at `now`. One statement. */
export async function readSeeds(query: BudgetQuery, now: number): Promise<Map<string, Seed>> {
  const rows = (await query(
    `SELECT 'b' AS t, key, arrival AS at FROM budget_buckets WHERE arrival > $1
     UNION ALL SELECT 's', key, until_at FROM budget_slots WHERE until_at > $1
     UNION ALL SELECT 'p', key, paused_until FROM budget_pauses WHERE paused_until > $1`,
    [now],
  )) as { t: "b" | "s" | "p"; key: string; at: number }[];
  const seeds = new Map<string, Seed>();
  for (const { t, key, at } of rows) {
    const seed = seeds.get(key) ?? { ...NO_SEED, untilAt: [] };
    if (t === "b") seed.arrival = at;
    else if (t === "s") seed.untilAt.push(at);
    else seed.pausedUntil = at;
    seeds.set(key, seed);
  }
  for (const seed of seeds.values()) seed.untilAt.sort((a, b) => a - b);
  return seeds;
}

/**
 * Writes what the budgets kept in memory spent, so that replicas sharing the tables from now
 * on count it: a bucket's arrival and a pause only ever move later, slots are added. Held
 * slots are inserted held, counting until their `untilAt` unless released, and their ids are
 * told to `carried`, for the requests' releases.
 */
export async function writeSpent(query: BudgetQuery, spent: readonly Spent[]): Promise<void> {
  const buckets = spent.filter((s) => s.arrival !== undefined);
  const slots = spent.flatMap((s) => s.untilAt.map((at) => [s.key, at] as const));
  const pauses = spent.filter((s) => s.pausedUntil !== undefined);
  const held = spent.filter((s) => s.held !== undefined && s.held.count > 0);
  await Promise.all([
    buckets.length > 0 &&
      query(
        `INSERT INTO budget_buckets AS b (key, arrival)
         SELECT * FROM unnest($1::text[], $2::float8[])
         ON CONFLICT (key) DO UPDATE SET arrival = GREATEST(b.arrival, excluded.arrival)`,
        [buckets.map((s) => s.key), buckets.map((s) => s.arrival)],
      ),
    slots.length > 0 &&
      query(
        `INSERT INTO budget_slots (key, until_at, held)
         SELECT k, u, FALSE FROM unnest($1::text[], $2::float8[]) AS r(k, u)`,
        [slots.map(([key]) => key), slots.map(([, at]) => at)],
      ),
    pauses.length > 0 &&
      query(
        `INSERT INTO budget_pauses AS p (key, paused_until)
         SELECT * FROM unnest($1::text[], $2::float8[])
         ON CONFLICT (key) DO UPDATE
           SET paused_until = GREATEST(p.paused_until, excluded.paused_until)`,
        [pauses.map((s) => s.key), pauses.map((s) => s.pausedUntil)],
      ),
    ...held.map(async (s) => {
      const { count, untilAt, carried } = s.held as NonNullable<Spent["held"]>;
      const rows = await query(
        `INSERT INTO budget_slots (key, until_at, held)
         SELECT $1, $2, TRUE FROM generate_series(1, $3::int) RETURNING id`,
        [s.key, untilAt, count],
      );
      // Written: a write tried again after another statement failed does not write them twice.
      s.held = undefined;
      carried(rows.map((row) => Number(row.id)));
    }),
  ]);
}
