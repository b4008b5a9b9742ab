/**
 * Copies of the bot (child processes) on one PostgreSQL database, as behind a load balancer,
 * for the replicas' end-to-end tests (replicas.test.ts, replicas-handover.test.ts,
 * thread-order-replicas.test.ts): a fresh simulator and fake Slack for each test, the copies
 * launched on them, events delivered to a copy at random as Slack delivers them. Each test
 * file that imports it gets its own.
 */
import { afterEach, beforeEach } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import {
  appMention,
  eventEnvelope,
  messageEvent,
  nextTs,
  type Payload,
} from "../../tools/slack-requests.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, startChildBot } from "../support/child-bot.js";

export const THREADS = 20;
export const PER_THREAD = 5;
export const CHANNELS = 10;
/** Budgets raised above Slack's and the service's real ones, and told to the bot alike, so
 * that 100 answers finish in seconds; the replicas must still share them. */
export const SLACK_LIMITS = {
  "chat.update": 600,
  "chat.postMessage": 600,
  "conversations.replies": 600,
  "assistant.threads.setStatus": 600,
  "agents.sessions.setStatus": 600,
  "agents.sessions.rename": 600,
} as const;
export const SERVICE_LIMIT = 600;

export let sim: RunningSimulator;
export let slack: FakeSlack;
let servicesOpen = false;
const replicas: ChildBot[] = [];

async function closeServices(): Promise<void> {
  if (!servicesOpen) return;
  servicesOpen = false;
  await slack.close();
  await sim.close();
}

/**
 * A new simulator and fake Slack (the ones before closed): a second run starts from nothing.
 * `queueDelayMs`: how long each run waits in the service's queue before it writes.
 */
export async function freshServices(queueDelayMs = 10): Promise<void> {
  await closeServices();
  servicesOpen = true;
  sim = await startSimulator({
    queueDelayMs,
    answer: { length: 120, tokensPerSecond: 200 },
    limits: { runStartsPerMinute: SERVICE_LIMIT, requestsPerMinute: 6_000 },
  });
  slack = await startFakeSlack({ limits: SLACK_LIMITS, postBurst: 5 });
}

/**
 * Fresh services for each test of the file that calls it (at its top level), and every
 * replica killed after. Called by each file: with the module loaded once per worker, hooks
 * registered here at import would serve only the first file to import it.
 */
export function clusterPerTest(): void {
  beforeEach(() => freshServices());
  afterEach(async () => {
    for (const replica of replicas.splice(0)) await replica.kill("SIGKILL");
    await closeServices();
  });
}

export async function launch(
  databaseUrl: string,
  extra: Record<string, string> = {},
): Promise<ChildBot> {
  const bot = await startChildBot(
    childEnv({
      slackApiUrl: slack.apiUrl,
      serviceUrl: sim.url,
      databasePath: "/nonexistent/unused.db",
      extra: {
        DATABASE_URL: databaseUrl,
        LEASE_SECONDS: "3",
        LOG_LEVEL: "info",
        // Each question would read its thread first (conversations.replies, Tier 3 per
        // workspace): 100 questions in a minute wait on that, whatever the replicas do.
        THREAD_CONTEXT_CHARS: "0",
        SLACK_UPDATES_PER_MINUTE: "500",
        ASSISTANT_RUN_STARTS_PER_MINUTE: String(SERVICE_LIMIT),
        ...extra,
      },
    }),
  );
  replicas.push(bot);
  return bot;
}

export interface Question {
  thread: number;
  index: number;
  channel: string;
  user: string;
  threadTs: string;
  text: string;
}

/** The questions of one round: the `index`-th message of every thread. */
export function round(index: number, roots: string[]): { question: Question; event: Payload }[] {
  return roots.map((root, thread) => {
    const channel = `C0REPL${thread % CHANNELS}`;
    const user = `U0PERSON${thread}`;
    const ts = index === 0 ? root : nextTs();
    const text = `Thread ${thread}, question ${index}: what comes next?`;
    slack.seedMessage({ channel, ts, user, text, ...(index === 0 ? {} : { thread_ts: root }) });
    const event =
      index === 0
        ? appMention({ channel, user, text: `<@UBOT> ${text}`, ts })
        : messageEvent({ channel, channel_type: "channel", user, text, ts, thread_ts: root });
    return {
      question: { thread, index, channel, user, threadTs: root, text },
      event: eventEnvelope(event),
    };
  });
}

/**
 * Delivers an event as Slack does: to one of the live replicas at random, and, while it is not
 * acknowledged (a replica that cannot be reached, or one that answers 500 because it could
 * not record the question), again as a retry, up to Slack's three retries. Any answer but 200
 * is printed, with the replica's last error lines, so a flaky failure explains itself.
 */
export async function deliver(event: Payload, live: ChildBot[], retryNum?: number): Promise<void> {
  const answers: string[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    const replica = live[Math.floor(Math.random() * live.length)] as ChildBot;
    const retry = attempt === 0 ? retryNum : (retryNum ?? 0) + attempt;
    const response = await replica
      .post("event", event, retry === undefined ? {} : { retryNum: retry })
      .catch((error: unknown) => ({ status: 0, body: String(error) }));
    if (response.status === 200) return;
    answers.push(`HTTP ${response.status} ${response.body}`);
    const errors = replica.logs.filter((line) => /"level":(50|60)/.test(line)).slice(-3);
    console.warn(`event not acknowledged: ${answers.at(-1)}\n${errors.join("\n")}`);
  }
  throw new Error(`no replica took the event: ${answers.join("; ")}`);
}

/**
 * Asks every question (each round to the replicas at random, a third of them delivered again
 * to another replica as Slack's retries) and waits until every answer is final. With `kill`,
 * the first replica is SIGKILLed once answers are being written. The threads' roots.
 */
export async function askAll(bots: ChildBot[], kill: boolean): Promise<string[]> {
  let live = [...bots];
  const roots = Array.from({ length: THREADS }, () => nextTs());
  for (let index = 0; index < PER_THREAD; index++) {
    if (index === 2 && kill) {
      // Answers are being written: one replica dies in the middle of them.
      await slack.waitFor(() => sim.control.counts().runs >= THREADS + 5, 30_000);
      await live[0]?.kill("SIGKILL");
      live = live.slice(1);
    }
    await Promise.all(
      round(index, roots).map(async ({ event }, n) => {
        await deliver(event, live);
        // Slack delivers some events again (a slow acknowledgement), to whichever copy.
        if (n % 3 === 0) await deliver(event, live, 1);
      }),
    );
  }
  const done = (thread: number, root: string) => {
    const replies = slack.replies(`C0REPL${thread % CHANNELS}`, root);
    return replies.length === PER_THREAD && replies.every((m) => !hasStopButton(m));
  };
  await slack
    .waitFor(() => roots.every((root, thread) => done(thread, root)), 120_000)
    .catch((error: unknown) => {
      // What is unfinished, so that a failure explains itself.
      for (const [thread, root] of roots.entries()) {
        if (done(thread, root)) continue;
        const replies = slack.replies(`C0REPL${thread % CHANNELS}`, root);
        const stoppable = replies.filter((m) => hasStopButton(m)).length;
        explain(thread, slack.threadTranscript(`C0REPL${thread % CHANNELS}`, root), bots);
        console.warn(
          `thread ${thread}: ${replies.length} replies, ${stoppable} with a Stop button`,
        );
      }
      throw error;
    });
  return roots;
}

/** A thread whose questions did not all reach the service: what Slack shows, what the replicas logged. */
export function explain(thread: number, transcript: string[], bots: ChildBot[]): void {
  const logged = bots.flatMap((bot, i) =>
    bot.logs
      .filter((line) => /"level":(40|50|60)/.test(line))
      .map((line) => `replica ${i}: ${line}`),
  );
  console.warn(
    `thread ${thread} in Slack:\n${transcript.join("\n---\n")}\nwarnings:\n${logged.slice(-40).join("\n")}`,
  );
}

/** Slack calls that landed, by method. */
export function callCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const call of slack.calls) if (call.ok) counts[call.method] = (counts[call.method] ?? 0) + 1;
  return counts;
}
