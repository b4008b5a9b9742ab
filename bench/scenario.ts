import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeSlack, startFakeSlack } from "../src/devtools/fake-slack/server.js";
import { appMention, nextTs, postToBot } from "../src/devtools/slack-requests.js";
import { startSimulator } from "../src/simulator/server.js";
import type { BenchOptions } from "./args.js";
import { BotProcess, readSample } from "./bot-process.js";
import { Observer } from "./observer.js";
import { OutsideView } from "./outside-view.js";
import { type ScenarioResult, summarize } from "./summary.js";
import { pieces, planWorkload } from "./workload.js";

export type { ScenarioResult } from "./summary.js";

/**
 * One repetition of one scenario: a fresh simulator, a fresh fake Slack (rate tiers enforced)
 * and a fresh bot process; N people @mention the bot at `arrivalsPerSecond` over `channels`
 * channels; the run ends when every thread shows its whole answer. Returns the raw
 * observations; report.ts sums them up.
 */

/** The run's options (args.ts has their meaning), for one N, channel count and repetition. */
export type ScenarioOptions = Omit<BenchOptions, "n" | "channels" | "reps" | "out" | "runtime"> & {
  n: number;
  channels: number;
  rep: number;
  /** A compiled main.js to run; undefined runs src/main.ts through tsx. */
  compiledMain: string | undefined;
};

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
  let bot: BotProcess | undefined;
  const observer = new Observer(sim, slack);
  const outside = new OutsideView(sim, slack);
  try {
    bot = await BotProcess.start({
      ...(o.compiledMain ? { compiledMain: o.compiledMain } : {}),
      cwd: dir,
      env: {
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: slack.apiUrl,
        ASSISTANT_API_URL: sim.url,
        ASSISTANT_API_TOKEN: SERVICE_TOKEN,
        ASSISTANT_ID: "asst-bench",
        ASSISTANT_RUN_STARTS_PER_MINUTE: String(o.runStartsPerMinute),
        DATABASE_PATH: join(dir, "bridge.db"),
        LOG_LEVEL: "info",
      },
    });
    await bot.ready();
    const idle = await scrape(bot);
    const cpuBefore = readSample(idle, "bridge_process_cpu_seconds_total") ?? 0;
    const botUrl = `${bot.url}/slack/events`;

    const started = Date.now();
    const intervalMs = 1000 / o.arrivalsPerSecond;
    const acks: Promise<number>[] = [];
    for (const planned of workload.conversations) {
      await sleep(started + planned.index * intervalMs - Date.now());
      const ts = freshTs(slack, planned.channel);
      const text = `<@UBOT> ${planned.question}`;
      slack.seedMessage({ channel: planned.channel, ts, user: planned.user, text });
      observer.watch({ ...planned, threadTs: ts });
      const event = appMention({ channel: planned.channel, user: planned.user, text, ts });
      acks.push(
        postToBot(botUrl, SIGNING_SECRET, "event", event).then((r) => {
          if (r.status !== 200) throw new Error(`the bot answered ${r.status} to an event`);
          return r.ms;
        }),
      );
    }
    const ackMs = await Promise.all(acks);

    // Until every thread shows its whole answer (or the time is up).
    const deadline = started + o.timeoutMs;
    let open = observer.open();
    while (open > 0 && Date.now() < deadline) {
      await sleep(POLL_MS);
      open = observer.open();
    }
    const until = Date.now();

    // The bot counts a turn just after its final edit lands: give it a moment.
    let end = await scrape(bot);
    for (let i = 0; i < 50 && turnsCounted(end) < o.n - open; i++) {
      await sleep(100);
      end = await scrape(bot);
    }
    return summarize(
      o,
      { observer, outside, slack, sim },
      { started, until, ackMs, open },
      {
        idle,
        end,
        cpuBefore,
        problems: bot.problems,
      },
    );
  } finally {
    observer.close();
    outside.close();
    await bot?.stop();
    await slack.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
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

function turnsCounted(metrics: string): number {
  let total = 0;
  for (const outcome of ["completed", "failed", "stopped", "error"]) {
    total += readSample(metrics, `bridge_turns_total{outcome="${outcome}"}`) ?? 0;
  }
  return total;
}
