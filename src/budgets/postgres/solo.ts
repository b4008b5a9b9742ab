import pg from "pg";
import type { BudgetQuery } from "./budget-db.js";
import { NO_SEED, readSeeds, type Seed, type Spent, writeSpent } from "./handover.js";

/**
 * Where this replica's budgets are kept now: in its memory while it is the only replica on the
 * database ("solo"), in the tables replicas share otherwise ("shared"); "switching" while it
 * goes from one to the other, when no budget allows a take.
 */
export type BudgetMode = "solo" | "shared" | "switching";

/** A budget that follows the mode (switching.ts). */
export interface SoloMember {
  /** The mode changed: the budget drops what kept it before and wakes its spender. */
  changed(): void;
  /** What it spent in memory that still counts at `now`, once it stops keeping it there. */
  spent(now: number): Spent | undefined;
  /** Whether nothing it took of the shared tables is still held or in hand at `now`. */
  idle(now: number): boolean;
}

export interface SoloOptions {
  url: string;
  /** The schema of the budgets' tables (`search_path`); default the URL's. */
  schema?: string;
  /** Statements on the budgets' own connections (for the tables' reads and writes). */
  query: BudgetQuery;
  /** Once no statement of the shared budgets is on its way (BudgetDb.settled). */
  settled: () => Promise<void>;
  now: () => number;
  /** Calls `fn` after `ms`; answers what cancels it. Default an unref'd timer. */
  timer?: (ms: number, fn: () => void) => () => void;
  /**
   * While this replica shares the budgets, it looks this often whether it is alone now (the
   * others stopped), ms; default 5_000.
   */
  lookMs?: number;
  /** A replica waiting for the lone one to hand over tells it again this often, ms; default 1_000. */
  waitMs?: number;
  /** The lock's connection failed, or a hand-over's statement: told with the error. */
  onError?: (error: unknown) => void;
  /** The mode settled (solo or shared): for the log. */
  onMode?: (mode: BudgetMode) => void;
}

/** The advisory lock's first key ("solo"), the schema's hash the second. */
const SOLO_LOCK = 0x736f_6c6f;
const KEYS = `${SOLO_LOCK}, hashtext(current_schema())`;
/** Where a replica that comes tells the lone one (the payload: its schema). */
const CHANNEL = "budget_solo";
/** After the lock's connection failed, the protocol starts again this much later, ms. */
const AGAIN_MS = 1_000;
/**
 * How long a replica that comes waits for a lone one to hand over before it goes by the tables
 * anyway, ms: a hand-over takes milliseconds; one that has not come by then is from a process
 * that hangs.
 */
const JOIN_WAIT_MS = 30_000;
/** The lock connection's statements (the tables' read, the hand-over's writes) take at most this, ms. */
const STATEMENT_MS = 5_000;

function unrefTimer(ms: number, fn: () => void): () => void {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

/**
 * Whether this replica is alone on its database, told by an advisory lock held on a connection
 * of its own: a lone replica holds it exclusive and keeps its budgets in memory, with no
 * statement per take; replicas together each hold it shared and keep them in the tables
 * (shared-budgets.ts).
 *
 * - A replica that starts takes it exclusive if it can (nobody holds it): it reads the tables
 *   into memory (handover.ts), so that what earlier replicas spent still counts, and is solo.
 * - Otherwise it asks for it shared, which waits while a lone replica holds it exclusive, and
 *   tells that one (NOTIFY, again every `waitMs` while it waits). The lone one stops taking,
 *   writes what it spent in memory to the tables, takes the lock shared and lets go of its
 *   exclusive hold: both go on shared, the newcomer counting what the lone one spent.
 * - A replica sharing the budgets tries every `lookMs`, while nothing of its own is held in the
 *   tables, to take the lock exclusive as well: it can once the others are gone; it then reads
 *   the tables into memory and is solo again.
 *
 * A lone replica that dies takes what it spent in memory with it: the next replica's budgets
 * start from the tables, and Slack's 429s, which every replica heeds, cover the difference.
 * When the lock's connection fails, the protocol starts again AGAIN_MS later (`lost`).
 */
export class SoloLock {
  mode: BudgetMode = "switching";
  /** Counts the modes settled: a budget made in an earlier one is made again. */
  epoch = 0;
  private seeds = new Map<string, Seed>();
  private readonly members = new Set<WeakRef<SoloMember>>();
  private client: pg.Client | undefined;
  private schema = "";
  /** A replica asked for the hand-over while this one was going solo. */
  private asked = false;
  private closed = false;
  /** The protocol starts again after a failure: a timer is set. */
  private retrying = false;
  /** What the budgets spent in memory, read for the tables and not written yet (a failure). */
  private unwritten: Spent[] = [];
  private joined = 0;
  private cancelLook: (() => void) | undefined;
  private readonly timer: (ms: number, fn: () => void) => () => void;
  /** The protocol's step on its way, for `close` to wait for. */
  private step: Promise<void> = Promise.resolve();
  /** Settles once the mode is solo or shared; a new one at each switch. */
  private settledMode: { promise: Promise<void>; resolve: () => void } = pending();

  constructor(private readonly options: SoloOptions) {
    this.timer = options.timer ?? unrefTimer;
  }

  /** Starts the protocol; resolves once the mode has settled (solo or shared). Never rejects. */
  start(): Promise<void> {
    return this.run(() => this.settle());
  }

  /** Once the mode is solo or shared (at once unless switching). */
  ready(): Promise<void> {
    return this.mode === "switching" ? this.settledMode.promise : Promise.resolve();
  }

  /** Once no step of the protocol is on its way (for tests, and a close). */
  async quiet(): Promise<void> {
    for (let step = this.step; ; step = this.step) {
      await step;
      if (step === this.step) return;
    }
  }

  /** A budget follows the mode from now on (it is told through a weak reference). */
  join(member: SoloMember): void {
    // Those collected are let go now and then, not only at a switch.
    if (++this.joined % 256 === 0) this.live();
    this.members.add(new WeakRef(member));
  }

  /** What the tables said of `key` when this replica went solo (taken once). */
  seed(key: string): Seed {
    const seed = this.seeds.get(key);
    if (!seed) return NO_SEED;
    this.seeds.delete(key);
    return seed;
  }

  /** Writes what was spent in memory to the tables, and lets go of the lock. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelLook?.();
    await this.quiet();
    const client = this.client;
    this.client = undefined;
    const written = this.mode === "solo" ? this.handTables(client) : this.writeUnwritten(client);
    await written.catch((error) => this.options.onError?.(error));
    if (client) await letGo(client);
  }

  /** Runs the protocol's steps one at a time. */
  private run(step: () => Promise<void>): Promise<void> {
    const next = this.step.then(() => (this.closed ? undefined : step()));
    this.step = next.catch((error) => this.lost(error));
    return this.step;
  }

  private async settle(): Promise<void> {
    this.retrying = false;
    const client = await this.open();
    if (await this.lock(client, "pg_try_advisory_lock")) {
      // Alone all along (the lock's connection failed and was made again): memory goes on.
      if (this.mode === "solo") return;
      await this.goSolo(client, false);
      return;
    }
    // Another replica holds it: what was spent alone meanwhile goes to the tables first.
    if (this.mode === "solo") await this.handTables(client);
    else await this.writeUnwritten(client);
    await this.share(client);
  }

  /**
   * Waits for the lock shared, telling the lone replica (if any) every `waitMs`. A lone replica
   * that does not hand over within JOIN_WAIT_MS (its process hangs) is not waited for: the
   * budgets go by the tables meanwhile, as after a failure.
   */
  private async share(client: pg.Client): Promise<void> {
    const since = this.options.now();
    for (;;) {
      await client.query(`SELECT pg_notify('${CHANNEL}', current_schema())`);
      try {
        await client.query(`SELECT pg_advisory_lock_shared(${KEYS})`);
        break;
      } catch (error) {
        // The wait ran out (the connection's lock_timeout): tell it again.
        if ((error as { code?: string }).code !== "55P03" || this.closed) throw error;
        if (this.options.now() - since >= JOIN_WAIT_MS) this.settled("shared");
      }
    }
    this.settled("shared");
    this.lookLater();
  }

  /** Every `lookMs` while shared: alone now? Tried only while nothing of ours is in the tables. */
  private lookLater(): void {
    this.cancelLook = this.timer(this.options.lookMs ?? 5_000, () => {
      this.cancelLook = undefined;
      void this.run(async () => {
        const client = this.client;
        if (this.mode !== "shared" || !client) return;
        const now = this.options.now();
        const idle = this.live().every((member) => member.idle(now));
        if (idle && (await this.lock(client, "pg_try_advisory_lock"))) {
          await this.goSolo(client, true);
          return;
        }
        this.lookLater();
      });
    });
  }

  /** Holding the lock exclusive: reads the tables into memory and keeps the budgets there. */
  private async goSolo(client: pg.Client, wasShared: boolean): Promise<void> {
    this.asked = false;
    this.enter("switching");
    await this.options.settled();
    await this.writeUnwritten(client);
    this.seeds = await readSeeds((text, params) => rows(client, text, params), this.options.now());
    if (wasShared) await client.query(`SELECT pg_advisory_unlock_shared(${KEYS})`);
    this.settled("solo");
    if (this.asked) this.handOver();
  }

  /** Another replica came: what was spent in memory goes to the tables, and both share them. */
  private handOver(): void {
    this.asked = false;
    void this.run(async () => {
      const client = this.client;
      if (this.mode !== "solo" || !client) return;
      await this.handTables(client);
      await client.query(`SELECT pg_advisory_lock_shared(${KEYS})`);
      await client.query(`SELECT pg_advisory_unlock(${KEYS})`);
      this.settled("shared");
      this.lookLater();
    });
  }

  /** Stops every take, and writes what the budgets spent in memory. */
  private async handTables(client: pg.Client | undefined): Promise<void> {
    const now = this.options.now();
    // Read and stopped in one go: nothing is spent in memory after what is read.
    this.unwritten.push(...this.live().flatMap((member) => member.spent(now) ?? []));
    this.enter("switching");
    await this.writeUnwritten(client);
  }

  /** Writes what was read for the tables; kept for the next try if the write fails. */
  private async writeUnwritten(client: pg.Client | undefined): Promise<void> {
    if (this.unwritten.length === 0) return;
    const query: BudgetQuery = client
      ? (text, params) => rows(client, text, params)
      : this.options.query;
    await writeSpent(query, this.unwritten);
    this.unwritten = [];
  }

  /** The lock's connection, LISTENing for replicas that come. */
  private async open(): Promise<pg.Client> {
    const waitMs = this.options.waitMs ?? 1_000;
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: "slack-assistant-bridge",
      connectionTimeoutMillis: 5_000,
      // A wait for the lock runs out after waitMs, to tell the lone replica again (share).
      lock_timeout: waitMs,
      statement_timeout: STATEMENT_MS,
      query_timeout: STATEMENT_MS + waitMs,
      keepAlive: true,
      ...(this.options.schema === undefined
        ? {}
        : { options: `-c search_path=${this.options.schema}` }),
    });
    const failed = (error: unknown) => {
      if (this.client === client) void this.run(() => this.lost(error));
    };
    client.on("error", failed);
    client.on("end", () => failed(new Error("the lone-replica lock's connection ended")));
    client.on("notification", ({ payload }) => {
      if (payload !== this.schema) return;
      if (this.mode === "solo") this.handOver();
      // Going solo: handed over once there. Sharing: nothing to hand over.
      else if (this.mode === "switching") this.asked = true;
    });
    this.client = client;
    await client.connect();
    const [row] = await rows(client, "SELECT current_schema() AS schema", []);
    this.schema = String(row?.schema ?? "");
    await client.query(`LISTEN ${CHANNEL}`);
    return client;
  }

  private async lock(client: pg.Client, fn: string): Promise<boolean> {
    const [row] = await rows(client, `SELECT ${fn}(${KEYS}) AS ok`, []);
    return row?.ok === true;
  }

  /**
   * The lock's connection failed (or a statement on it), and the protocol starts again
   * AGAIN_MS later. A lone replica goes on in memory meanwhile: it is most likely alone still,
   * and finds out when it takes the lock again (settle). A switch cut short goes by the tables,
   * with their outage rules; what was read for them and not written is written at the next try.
   */
  private async lost(error: unknown): Promise<void> {
    if (this.closed || this.retrying) return;
    this.retrying = true;
    this.options.onError?.(error);
    const client = this.client;
    this.client = undefined;
    this.cancelLook?.();
    // Not waited for: a connection that broke may never say it ended.
    if (client) void letGo(client);
    if (this.mode === "switching") this.settled("shared");
    this.timer(AGAIN_MS, () => void this.run(() => this.settle()));
  }

  private enter(mode: BudgetMode): void {
    if (mode === "switching" && this.mode !== "switching") this.settledMode = pending();
    if (mode !== "switching") this.settledMode.resolve();
    this.mode = mode;
    this.epoch += 1;
    for (const member of this.live()) member.changed();
  }

  private settled(mode: "solo" | "shared"): void {
    if (mode === "shared") this.seeds = new Map();
    // Already shared (the lock taken again after a failure): the budgets go on as they are.
    if (mode === this.mode) return;
    this.enter(mode);
    this.options.onMode?.(mode);
  }

  private live(): SoloMember[] {
    const live: SoloMember[] = [];
    for (const ref of this.members) {
      const member = ref.deref();
      if (member) live.push(member);
      else this.members.delete(ref);
    }
    return live;
  }
}

/**
 * How long a close waits for the lock's connection to end, ms: one that broke may never say it
 * ended, and the server lets go of its lock once it sees the connection gone anyway.
 */
const END_WAIT_MS = 2_000;

async function letGo(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const given = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, END_WAIT_MS);
    timer.unref();
  });
  await Promise.race([client.end().catch(() => undefined), given]);
  clearTimeout(timer);
}

function pending(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

async function rows(
  client: pg.Client,
  text: string,
  params: readonly unknown[],
): Promise<Record<string, unknown>[]> {
  return (await client.query(text, [...params])).rows;
}
