import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { type FakeSlack, startFakeSlack } from "../tools/fake-slack/server.js";
import { startSimulator } from "../tools/simulator/server.js";
import { appMention, nextTs } from "../tools/slack-requests.js";
import { createScratchDatabase, type ScratchDatabase } from "../tools/throwaway-postgres.js";
import { AckSender } from "./ack-sender.js";
import type { BenchOptions } from "./args.js";
import { BotProcess, readSample } from "./bot-process.js";
import { Observer } from "./observer.js";
import { OutsideView } from "./outside-view.js";
import { OUTCOMES, type ReplicaScrape } from "./replica-metrics.js";
import { type ScenarioResult, summarize } from "./summary.js";
import { pieces, planWorkload } from "./workload.js";

export type { ScenarioResult } from "./summary.js";

/**
 * One repetition of one scenario: a fresh simulator, a fresh fake Slack (rate tiers enforced)
 * and a fresh bot process (or `replicas` of them on a fresh PostgreSQL database, the events
 * dealt to them round robin: an even, repeatable share, so that runs compare with each other
 * and with one replica; a random pick would add its own variance); N people @mention the bot at `arrivalsPerSecond` over `channels`
 * channels; the run ends when every thread shows its whole answer. Returns the raw
 * observations; report.ts sums them up.
 */

/** The run's options (args.ts has their meaning), for one N, channel count and repetition. */
export type ScenarioOptions = Omit<
  BenchOptions,
  | "n"
  | "channels"
  | "reps"
  | "out"
  | "runtime"
  | "databaseUrl"
  | "compareWith"
  | "withTemplate"
  | "beside"
> & {
  /** The PostgreSQL server replicas get a fresh database on (needed when replicas > 1). */
  databaseServerUrl?: string | undefined;
  n: number;
  channels: number;
  rep: number;
  /** A compiled main.js to run; undefined runs src/main.ts through tsx. */
  compiledMain: string | undefined;
  /** Slack's own agent template (template-bot.ts) in the bot's place: one process, no metrics. */
  template?: boolean;
};

const TEMPLATE = fileURLToPath(new URL("./template-bot.ts", import.meta.url));

const BOT_TOKEN = "xoxb-bench-bot-token";
const SIGNING_SECRET = "bench-signing-secret";
const SERVICE_TOKEN = "bench-service-token";
/** How often the bench looks whether every thread is done, ms. */
const POLL_MS = 250;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function scrape(bot: BotProcess): Promise<string> {
  const { status, text } = await bot.get("/metrics");
  if (status !== 200) throw new Error(`/metrics answered ${status}`);
  return text;
}

export async function runScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const workload = planWorkload(o);
  const sim = await startSimulator({
    answer: { tokensPerSecond: o.piecesPerSecond },
    limits: { runStartsPerMinute: o.runStartsPerMinute },
  });
  for (const text of workload.answers) {
    sim.control.enqueueAnswer({ chunks: pieces(text, o.pieceChars) });
  }
  const slack = await startFakeSlack({});
  const dir = mkdtempSync(join(tmpdir(), "bridge-bench-"));
  const bots: BotProcess[] = [];
  let database: ScratchDatabase | undefined;
  let leases: LeaseWatch | undefined;
  const observer = new Observer(sim, slack);
  const outside = new OutsideView(sim, slack);
  const sender = new AckSender();
  try {
    const env: Record<string, string> = {
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.apiUrl,
      ASSISTANT_API_URL: sim.url,
      ASSISTANT_API_TOKEN: SERVICE_TOKEN,
      ASSISTANT_ID: "asst-bench",
      ASSISTANT_RUN_STARTS_PER_MINUTE: String(o.runStartsPerMinute),
      DATABASE_PATH: join(dir, "bridge.db"),
      LOG_LEVEL: "info",
    };
    if (o.postgres) {
      if (!o.databaseServerUrl) throw new Error("PostgreSQL runs need a server");
      database = await createScratchDatabase(o.databaseServerUrl, "bench");
      env.DATABASE_URL = database.url;
    }
    const program = o.template
      ? { program: TEMPLATE }
      : o.compiledMain
        ? { compiledMain: o.compiledMain }
        : {};
    const started = await Promise.allSettled(
      Array.from({ length: o.template ? 1 : o.replicas }, () =>
        BotProcess.start({ ...program, cwd: dir, env }),
      ),
    );
    for (const result of started) if (result.status === "fulfilled") bots.push(result.value);
    const failed = started.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    await Promise.all(bots.map((bot) => bot.ready()));
    const idle = await Promise.all(bots.map(scrape));
    const cpuBefore = idle.map((text) => readSample(text, "bridge_process_cpu_seconds_total") ?? 0);
    if (database) leases = watchLeases(database.url, bots);
    for (const bot of bots) await sender.warm(`${bot.url}/healthz`);

    const began = Date.now();
    const intervalMs = 1000 / o.arrivalsPerSecond;
    const acks: Promise<number>[] = [];
    for (const planned of workload.conversations) {
      await sleep(began + planned.index * intervalMs - Date.now());
      const ts = freshTs(slack, planned.channel);
      const text = `<@UBOT> ${planned.question}`;
      slack.seedMessage({ channel: planned.channel, ts, user: planned.user, text });
      observer.watch({ ...planned, threadTs: ts });
      const event = appMention({ channel: planned.channel, user: planned.user, text, ts });
      const bot = bots[planned.index % bots.length] as BotProcess;
      acks.push(
        sender.send(`${bot.url}/slack/events`, SIGNING_SECRET, event).then((r) => {
          if (r.status !== 200) throw new Error(`the bot answered ${r.status} to an event`);
          return r.ms;
        }),
      );
    }
    const ackMs = await Promise.all(acks);

    // Until every thread shows its whole answer (or the time is up).
    const deadline = began + o.timeoutMs;
    let open = observer.open();
    while (open > 0 && Date.now() < deadline) {
      await sleep(POLL_MS);
      open = observer.open();
    }
    const until = Date.now();

    // The bot counts a turn just after its final edit lands: give it a moment.
    let end = await Promise.all(bots.map(scrape));
    for (let i = 0; !o.template && i < 50 && turnsCounted(end) < o.n - open; i++) {
      await sleep(100);
      end = await Promise.all(bots.map(scrape));
    }
    const peaks = (await leases?.stop()) ?? [];
    const replicas: ReplicaScrape[] = bots.map((_, i) => ({
      idle: idle[i] ?? "",
      end: end[i] ?? "",
      cpuBefore: cpuBefore[i] ?? 0,
      ...(database ? { peakLeases: peaks[i] ?? 0 } : {}),
    }));
    return summarize(
      o,
      { observer, outside, slack, sim },
      { started: began, until, ackMs, open },
      { replicas, problems: bots.flatMap((bot) => bot.problems) },
    );
  } finally {
    observer.close();
    outside.close();
    await sender.close();
    await leases?.stop();
    await Promise.all(bots.map((bot) => bot.stop()));
    await database?.drop();
    await slack.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface LeaseWatch {
  /** Stops watching; the most leases each replica held at once, in the bots' order. */
  stop(): Promise<number[]>;
}

/**
 * Reads who holds which lease every POLL_MS, from the database rather than /metrics: a
 * scrape costs the bot CPU that would count in its figures.
 */
function watchLeases(url: string, bots: readonly BotProcess[]): LeaseWatch {
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  const peaks = bots.map(() => 0);
  let stopped: Promise<number[]> | undefined;
  let reading: Promise<unknown> = Promise.resolve();
  const read = async () => {
    await connected;
    const { rows } = await client.query<{ holder: string; n: string }>(
      "SELECT holder, COUNT(*) AS n FROM conversation_leases WHERE expires_at > $1 GROUP BY holder",
      [Date.now()],
    );
    for (const row of rows) {
      const pid = Number(row.holder.split(":").at(-2));
      const i = bots.findIndex((bot) => bot.pid === pid);
      if (i >= 0) peaks[i] = Math.max(peaks[i] ?? 0, Number(row.n));
    }
  };
  const timer = setInterval(() => {
    reading = read().catch(() => undefined);
  }, POLL_MS);
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(timer);
        await reading;
        await client.end().catch(() => undefined);
        return peaks;
      })();
      return stopped;
    },
  };
}

/**
 * A ts for a person's new message. The fake hands out the bot's ts from the same clock, so
 * in a busy channel the bot may already have a message at the ts nextTs() gives.
 */
function freshTs(slack: FakeSlack, channel: string): string {
  const taken = new Set(slack.messages(channel).map((m) => m.ts));
  let ts = nextTs();
  while (taken.has(ts)) ts = nextTs();
  return ts;
}

/** Turns ended, all replicas together. */
function turnsCounted(scrapes: readonly string[]): number {
  let total = 0;
  for (const metrics of scrapes) {
    for (const outcome of OUTCOMES) {
      total += readSample(metrics, `bridge_turns_total{outcome="${outcome}"}`) ?? 0;
    }
  }
  return total;
}
