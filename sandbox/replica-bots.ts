/**
 * The sandbox's bots as replicas: n child processes (replicas.ts) on a database of the
 * session's own, created on the given PostgreSQL server and dropped at the end. The person's
 * requests go to the live replicas in turn (round robin: each message visibly lands on the
 * next one; a replica that cannot be reached is skipped, as a load balancer would). Which
 * replica answers is read from the database (the lease holder of the turn's conversation
 * while the turn runs) and from the replicas' "conversation taken over" log lines (a takeover
 * can finish an answer between two readings), so a takeover shows as "replica 1 → replica 2".
 */
import pg from "pg";
import { openPostgresStores } from "../src/store/postgres/open.js";
import type { Stores } from "../src/store/stores.js";
import type { Turn } from "../src/store/turn.js";
import {
  type BotResponse,
  type Payload,
  postToBot,
  type RequestKind,
} from "../tools/slack-requests.js";
import { createScratchDatabase } from "../tools/throwaway-postgres.js";
import { type Replica, replicaOfHolder, startReplica } from "./replicas.js";

/** How long a dead replica's conversations wait before another takes them over, seconds. */
export const SANDBOX_LEASE_SECONDS = 5;
/** How often the lease holders of running turns are read, ms. */
const WATCH_MS = 100;

/** What the chat shows of the replicas. */
export interface ReplicaView {
  readonly list: readonly Replica[];
  /** The session's database (on the server given), dropped at the end. */
  readonly database: string;
  /** The replica that acknowledged the request carrying this message. */
  receivedBy(messageTs: string): number | undefined;
  /** The replicas seen holding the message's conversation while its turn ran, in order. */
  answeredBy(messageTs: string): Promise<number[]>;
  /** SIGKILLs replica `n`; false when there is no such live replica. */
  kill(n: number): Promise<boolean>;
  /** Live leases per replica number. */
  leases(): Promise<Map<number, number>>;
}

export interface ReplicaBots {
  view: ReplicaView;
  /** Posts to the next live replica (another when it cannot be reached). */
  post(kind: RequestKind, payload: Payload, messageTs?: string): Promise<BotResponse>;
  turnFor(team: string, channel: string, messageTs: string): Promise<Turn | undefined>;
  /** Resolves once no turn is unfinished. */
  idle(): Promise<void>;
  close(graceMs: number): Promise<void>;
}

export interface ReplicaBotsOptions {
  count: number;
  /** A PostgreSQL server the session may create a database on. */
  serverUrl: string;
  /** Every replica's settings but the database's. */
  env: Record<string, string>;
  signingSecret: string;
  log: (line: string) => void;
  /** The sandbox's workspace and channel (answeredBy looks its turns up there). */
  team: string;
  channel: string;
}

export async function startReplicaBots(options: ReplicaBotsOptions): Promise<ReplicaBots> {
  const cleanup: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  };
  try {
    const database = await createScratchDatabase(options.serverUrl, "sandbox");
    cleanup.push(() => database.drop());
    const replicas: Replica[] = [];
    let graceMsAtClose = 1_000;
    cleanup.push(() => Promise.all(replicas.map((r) => r.stop(graceMsAtClose))));
    const env = {
      ...options.env,
      DATABASE_URL: database.url,
      LEASE_SECONDS: String(SANDBOX_LEASE_SECONDS),
    };
    const takeovers = new TakeoverLog();
    const log = (line: string) => {
      options.log(line);
      takeovers.read(line);
    };
    const numbers = Array.from({ length: options.count }, (_, i) => i + 1);
    const started = await Promise.allSettled(
      numbers.map((number) => startReplica({ number, env, log })),
    );
    for (const result of started) if (result.status === "fulfilled") replicas.push(result.value);
    const failed = started.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;

    // The sandbox's own reading of the turns (the stores' synchronous client), after the
    // replicas migrated the schema.
    const stores: Stores = openPostgresStores(database.url);
    cleanup.push(async () => await stores.close());
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    cleanup.push(() => pool.end());
    const watch = watchHolders(pool, replicas);
    cleanup.push(async () => watch.stop());

    const received = new Map<string, number>();
    let next = 0;
    const bots: ReplicaBots = {
      view: {
        list: replicas,
        database: database.name,
        receivedBy: (ts) => received.get(ts),
        async answeredBy(ts) {
          const turn = await stores.turns.byMessage(options.team, options.channel, ts);
          const seen = watch.seen.get(ts) ?? [];
          if (!turn) return seen;
          return withTakeovers(seen, takeovers.since(turn.conversationId, turn.createdAt));
        },
        async kill(n) {
          const replica = replicas.find((r) => r.number === n && r.alive());
          if (!replica) return false;
          await replica.kill();
          return true;
        },
        leases: () => leasesPerReplica(pool, replicas),
      },
      async post(kind, payload, messageTs) {
        let lastError: unknown = new Error("no replica is alive");
        for (let tries = 0; tries < replicas.length; tries++) {
          const replica = replicas[next++ % replicas.length] as Replica;
          if (!replica.alive()) continue;
          try {
            const endpoint = `${replica.url}/slack/events`;
            const response = await postToBot(endpoint, options.signingSecret, kind, payload);
            if (messageTs !== undefined) received.set(messageTs, replica.number);
            return response;
          } catch (error) {
            lastError = error;
          }
        }
        throw lastError;
      },
      turnFor: (team, channel, ts) => stores.turns.byMessage(team, channel, ts),
      async idle() {
        while ((await stores.turns.unfinished()).length > 0) {
          await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
        }
      },
      async close(graceMs) {
        graceMsAtClose = graceMs;
        await closeAll();
      },
    };
    return bots;
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/**
 * Reads, every WATCH_MS, which replica holds the conversation of each running turn; keeps,
 * per message, the replicas seen, in order, without repeats in a row.
 */
function watchHolders(pool: pg.Pool, replicas: readonly Replica[]) {
  const seen = new Map<string, number[]>();
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const { rows } = await pool.query<{ message_ts: string; holder: string }>(
        `SELECT t.message_ts, l.holder FROM turns t
         JOIN conversation_leases l ON l.conversation_id = t.conversation_id
         WHERE t.state <> 'finished' AND l.expires_at > $1`,
        [Date.now()],
      );
      for (const row of rows) {
        const number = replicaOfHolder(row.holder, replicas);
        if (number === undefined) continue;
        const list = seen.get(row.message_ts) ?? [];
        if (list.at(-1) !== number) seen.set(row.message_ts, [...list, number]);
      }
    } catch {
      // Closing, or the database is briefly busy: the next tick reads again.
    } finally {
      busy = false;
    }
  }, WATCH_MS);
  return { seen, stop: () => clearInterval(timer) };
}

async function leasesPerReplica(
  pool: pg.Pool,
  replicas: readonly Replica[],
): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ holder: string; n: string }>(
    "SELECT holder, COUNT(*) AS n FROM conversation_leases WHERE expires_at > $1 GROUP BY holder",
    [Date.now()],
  );
  const out = new Map<number, number>();
  for (const row of rows) {
    const number = replicaOfHolder(row.holder, replicas);
    if (number !== undefined) out.set(number, (out.get(number) ?? 0) + Number(row.n));
  }
  return out;
}

/** The "conversation taken over" lines of the replicas' logs: by which replica, when. */
class TakeoverLog {
  private readonly entries: { conversation: number; replica: number; at: number }[] = [];

  read(line: string): void {
    const match = /^\[replica (\d+)\] (\{.*"conversation taken over".*\})$/.exec(line);
    if (!match) return;
    try {
      const entry = JSON.parse(match[2] as string) as { conversation?: unknown; time?: unknown };
      if (typeof entry.conversation !== "number") return;
      const at = typeof entry.time === "number" ? entry.time : Date.now();
      this.entries.push({ conversation: entry.conversation, replica: Number(match[1]), at });
    } catch {
      // Not a JSON line after all.
    }
  }

  /** The replicas that took the conversation over at or after `at`, in order. */
  since(conversation: number, at: number): number[] {
    return this.entries
      .filter((e) => e.conversation === conversation && e.at >= at)
      .map((e) => e.replica);
  }
}

/** The holders seen, then the takeovers not seen yet, without repeats in a row. */
export function withTakeovers(seen: readonly number[], takers: readonly number[]): number[] {
  const out = [...seen];
  for (const taker of takers) if (!out.includes(taker)) out.push(taker);
  return out;
}
