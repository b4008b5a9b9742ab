import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeSlack } from "../src/devtools/fake-slack/server.js";
import { appMention, nextTs, postToBot } from "../src/devtools/slack-requests.js";
import { startSimulator } from "../src/simulator/server.js";
import { BotProcess, readSample } from "./bot-process.js";
import { Observer } from "./observer.js";
import { isExact, lagAt } from "./stats.js";
import { planWorkload } from "./workload.js";

/**
 * One repetition at one N: a fresh simulator, a fresh fake Slack (rate tiers enforced) and a
 * fresh bot process; N people @mention the bot at `arrivalsPerSecond`; the run ends when
 * every thread shows its final reply. Returns the raw observations; report.ts sums them up.
 */

export interface ScenarioOptions {
  n: number;
  rep: number;
  minChars: number;
  maxChars: number;
  tokensPerSecond: number;
  runStartsPerMinute: number;
  channels: number;
  users: number;
  arrivalsPerSecond: number;
  sampleMs: number;
  timeoutMs: number;
  seed: number;
  /** A compiled main.js to run; undefined runs src/main.ts through tsx. */
  compiledMain: string | undefined;
}

export interface ScenarioResult {
  n: number;
  rep: number;
  /** From the first question to the last final reply, ms. */
  wallMs: number;
  ackMs: number[];
  /** Per answer: first visible answer text minus the service's first text, ms. */
  firstVisibleMs: number[];
  /** Staleness samples of every live reply: time lag (ms) and character lag. */
  lagMs: number[];
  lagChars: number[];
  /** chat.postMessage + chat.update + chat.delete calls (429s included). */
  slackReplyCalls: number;
  slackCallsByMethod: Record<string, number>;
  slack429: number;
  service429: number;
  serviceRequests: number;
  exact: boolean[];
  answerChars: number[];
  outcomes: Record<string, number>;
  unsettled: number;
  /** Bot process figures from its /metrics. */
  idleRssBytes: number;
  endRssBytes: number;
  peakRssBytes: number;
  endHeapUsedBytes: number;
  cpuMs: number;
  botProblems: string[];
}

const BOT_TOKEN = "xoxb-bench-bot-token";
const SIGNING_SECRET = "bench-signing-secret";
const SERVICE_TOKEN = "bench-service-token";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function scrape(bot: BotProcess): Promise<string> {
  const { status, text } = await bot.get("/metrics");
  if (status !== 200) throw new Error(`/metrics answered ${status}`);
  return text;
}

export async function runScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const workload = planWorkload(o);
  const sim = await startSimulator({
    answer: { tokensPerSecond: o.tokensPerSecond },
    limits: { runStartsPerMinute: o.runStartsPerMinute },
  });
  for (const text of workload.answers) sim.control.enqueueAnswer({ text });
  const slack = await startFakeSlack({});
  const dir = mkdtempSync(join(tmpdir(), "bridge-bench-"));
  let bot: BotProcess | undefined;
  let sampler: NodeJS.Timeout | undefined;
  const observer = new Observer(sim, slack);
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
    let open = Number.POSITIVE_INFINITY;
    sampler = setInterval(() => {
      open = observer.sample();
    }, o.sampleMs);
    for (const planned of workload.conversations) {
      await sleep(started + planned.index * intervalMs - Date.now());
      const ts = nextTs();
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

    // Until every thread shows its final reply (or the time is up).
    const deadline = started + o.timeoutMs;
    open = observer.sample();
    while (open > 0 && Date.now() < deadline) await sleep(o.sampleMs);
    clearInterval(sampler);
    const wallMs =
      open > 0 ? Date.now() - started : Math.max(started, ...observer.settledAt.values()) - started;

    // The bot counts a turn just after its final edit lands: give it a moment.
    let end = await scrape(bot);
    for (let i = 0; i < 50 && turnsCounted(end) < o.n - open; i++) {
      await sleep(100);
      end = await scrape(bot);
    }
    return summarize(o, observer, slack, sim, { ackMs, wallMs, open, idle, end, cpuBefore, bot });
  } finally {
    clearInterval(sampler);
    observer.close();
    await bot?.stop();
    await slack.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function turnsCounted(metrics: string): number {
  let total = 0;
  for (const outcome of ["completed", "failed", "stopped", "error"]) {
    total += readSample(metrics, `bridge_turns_total{outcome="${outcome}"}`) ?? 0;
  }
  return total;
}

function summarize(
  o: ScenarioOptions,
  observer: Observer,
  slack: Awaited<ReturnType<typeof startFakeSlack>>,
  sim: Awaited<ReturnType<typeof startSimulator>>,
  m: {
    ackMs: number[];
    wallMs: number;
    open: number;
    idle: string;
    end: string;
    cpuBefore: number;
    bot: BotProcess;
  },
): ScenarioResult {
  const firstChunkDelayMs = Math.floor(1000 / o.tokensPerSecond);
  const firstVisibleMs: number[] = [];
  const lagMs: number[] = [];
  const lagChars: number[] = [];
  const exact: boolean[] = [];
  const answerChars: number[] = [];
  const calls = slack.calls;
  for (const conversation of observer.watchedConversations()) {
    const run = observer.runOf(conversation);
    const transcript = slack.threadTranscript(conversation.channel, conversation.threadTs);
    exact.push(isExact(transcript, run?.output));
    const writing = run ? observer.writing(run, firstChunkDelayMs) : undefined;
    if (!run || !writing) continue;
    answerChars.push(writing.total);
    const visibleAt = observer.firstVisibleAt(conversation, calls);
    if (visibleAt !== undefined) firstVisibleMs.push(visibleAt - writing.start);
    const settled = observer.settledAt.get(conversation.index) ?? Number.POSITIVE_INFINITY;
    for (const sample of observer.samples.get(conversation.index) ?? []) {
      // Staleness while the answer is live: from its first text until its final reply shows.
      if (sample.at < writing.start || sample.at > settled) continue;
      const lag = lagAt(writing, sample.at, sample.visible);
      lagMs.push(lag.ms);
      lagChars.push(lag.chars);
    }
  }
  const byMethod: Record<string, number> = {};
  for (const call of calls) byMethod[call.method] = (byMethod[call.method] ?? 0) + 1;
  const replyMethods = ["chat.postMessage", "chat.update", "chat.delete"];
  const outcomes: Record<string, number> = {};
  for (const outcome of ["completed", "failed", "stopped", "error"]) {
    outcomes[outcome] = readSample(m.end, `bridge_turns_total{outcome="${outcome}"}`) ?? 0;
  }
  const cpuAfter = readSample(m.end, "bridge_process_cpu_seconds_total") ?? 0;
  return {
    n: o.n,
    rep: o.rep,
    wallMs: m.wallMs,
    ackMs: m.ackMs,
    firstVisibleMs,
    lagMs,
    lagChars,
    slackReplyCalls: replyMethods.reduce((sum, method) => sum + (byMethod[method] ?? 0), 0),
    slackCallsByMethod: byMethod,
    slack429: slack.rateLimited,
    service429: sim.control.requests.filter((r) => r.status === 429).length,
    serviceRequests: sim.control.requests.length,
    exact,
    answerChars,
    outcomes,
    unsettled: m.open,
    idleRssBytes: readSample(m.idle, "bridge_process_resident_memory_bytes") ?? Number.NaN,
    endRssBytes: readSample(m.end, "bridge_process_resident_memory_bytes") ?? Number.NaN,
    peakRssBytes: readSample(m.end, "bridge_process_peak_resident_memory_bytes") ?? Number.NaN,
    endHeapUsedBytes: readSample(m.end, "bridge_nodejs_heap_size_used_bytes") ?? Number.NaN,
    cpuMs: (cpuAfter - m.cpuBefore) * 1000,
    botProblems: [...m.bot.problems],
  };
}
