/**
 * Three copies of the bot (child processes) on one PostgreSQL database, as behind a load
 * balancer: questions reach them at random, Slack's retries reach another copy, and one copy
 * is SIGKILLed in the middle. Every question must be answered once, in its thread's order,
 * with the exact text, and the Slack calls must stay what one copy would make.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { START_UNCONFIRMED } from "../../src/bridge/turn/turn-ending.js";
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
import { testDatabase } from "../support/postgres.js";

const THREADS = 20;
const PER_THREAD = 5;
const CHANNELS = 10;
/** Budgets raised above Slack's and the service's real ones, and told to the bot alike, so
 * that 100 answers finish in seconds; the replicas must still share them. */
const SLACK_LIMITS = {
  "chat.update": 600,
  "chat.postMessage": 600,
  "conversations.replies": 600,
  "assistant.threads.setStatus": 600,
  "agents.sessions.setStatus": 600,
  "agents.sessions.rename": 600,
} as const;
const SERVICE_LIMIT = 600;

let sim: RunningSimulator;
let slack: FakeSlack;
let servicesOpen = false;
const replicas: ChildBot[] = [];

async function closeServices(): Promise<void> {
  if (!servicesOpen) return;
  servicesOpen = false;
  await slack.close();
  await sim.close();
}

beforeEach(() => freshServices());

/**
 * A new simulator and fake Slack (the ones before closed): a second run starts from nothing.
 * `queueDelayMs`: how long each run waits in the service's queue before it writes.
 */
async function freshServices(queueDelayMs = 10): Promise<void> {
  await closeServices();
  servicesOpen = true;
  sim = await startSimulator({
    queueDelayMs,
    answer: { length: 120, tokensPerSecond: 200 },
    limits: { runStartsPerMinute: SERVICE_LIMIT, requestsPerMinute: 6_000 },
  });
  slack = await startFakeSlack({ limits: SLACK_LIMITS, postBurst: 5 });
}

afterEach(async () => {
  for (const replica of replicas.splice(0)) await replica.kill("SIGKILL");
  await closeServices();
});

async function launch(databaseUrl: string, extra: Record<string, string> = {}): Promise<ChildBot> {
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

interface Question {
  thread: number;
  index: number;
  channel: string;
  user: string;
  threadTs: string;
  text: string;
}

/** The questions of one round: the `index`-th message of every thread. */
function round(index: number, roots: string[]): { question: Question; event: Payload }[] {
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
async function deliver(event: Payload, live: ChildBot[], retryNum?: number): Promise<void> {
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
async function askAll(bots: ChildBot[], kill: boolean): Promise<string[]> {
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
function explain(thread: number, transcript: string[], bots: ChildBot[]): void {
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
function callCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const call of slack.calls) if (call.ok) counts[call.method] = (counts[call.method] ?? 0) + 1;
  return counts;
}

describe("three replicas on one PostgreSQL database", () => {
  it("answers 100 questions over 20 threads once each, in order, with one replica killed, making the calls one replica makes", async () => {
    // The same workload with one replica first, for its Slack calls.
    const alone = await launch(await testDatabase());
    await askAll([alone], false);
    const oneReplica = callCounts();
    await alone.kill("SIGKILL");
    await freshServices();

    const url = await testDatabase();
    const bots = await Promise.all([launch(url), launch(url), launch(url)]);
    const roots = await askAll(bots, true);

    /** Starts the killed replica was sending when it died: the turns it held at that moment. */
    const unconfirmed: { thread: number; question: number; started: boolean }[] = [];
    for (const [thread, root] of roots.entries()) {
      const channel = `C0REPL${thread % CHANNELS}`;
      const serviceThread = serviceThreadOf(thread);
      // The questions reached the service in the thread's order ...
      const questions = sim.control.messages(serviceThread).filter((m) => m.role === "user");
      const asked = questions.map((m) => m.content.split("\n").at(-1));
      if (asked.length !== PER_THREAD) explain(thread, slack.threadTranscript(channel, root), bots);
      expect(asked).toEqual(
        Array.from(
          { length: PER_THREAD },
          (_, i) => `Thread ${thread}, question ${i}: what comes next?`,
        ),
      );
      // ... and each has one reply, in the same order, ending with its run's exact text;
      // unless the replica died while sending the run's start: the start may have arrived
      // (a run nobody ever read) or died with its sender (a request cut off, or purged from
      // the service's socket by the reset a killed process sends: no run). The interface
      // cannot find a thread's runs, so that turn says it may not have started rather than
      // start a second run.
      const transcript = slack.threadTranscript(channel, root);
      expect(transcript).toHaveLength(PER_THREAD);
      for (const [i, question] of questions.entries()) {
        const run = sim.control.runs().find((r) => r.triggerMessageId === question.id);
        const reply = transcript[i] ?? "";
        if (reply.includes(START_UNCONFIRMED) && (!run || neverRead(run.id))) {
          unconfirmed.push({ thread, question: i, started: run !== undefined });
          continue;
        }
        expect({ thread, question: i, status: run?.status, reply }).toEqual({
          thread,
          question: i,
          status: "completed",
          reply: expect.stringContaining(run?.output?.[0]?.text ?? "(no run was started)"),
        });
      }
    }
    // A thread's turns run one at a time: the kill caught at most one start of each.
    expect(new Set(unconfirmed.map((u) => u.thread)).size).toBe(unconfirmed.length);
    expect(sim.control.counts()).toEqual({
      threads: THREADS,
      messages: THREADS * PER_THREAD,
      runs: THREADS * PER_THREAD - unconfirmed.filter((u) => !u.started).length,
    });
    // One message per answer, whichever replica wrote it, took it over, or saw a retry.
    expect(slack.callsTo("chat.postMessage").filter((c) => c.ok)).toHaveLength(
      THREADS * PER_THREAD,
    );
    expect(slack.rateLimited).toBe(0);
    // What the replicas wrote in Slack is what one replica writes (10% for timing); besides,
    // each process asks auth.test once at start and the survivor looks up the placeholders of
    // the answers it took over (conversations.replies). Two kinds of calls are each replica's
    // own: interim edits (fresher text while an answer is written) keep each replica's pace,
    // inside the shared chat.update window (no 429 above), so three may send up to three paces
    // of them; and the status line and the agent session, which each replica sets for the
    // turns it runs, from what it has itself seen of the thread (a takeover starts afresh):
    // at most once and twice a question.
    const threeReplicas = callCounts();
    const own = [
      "auth.test",
      "conversations.replies",
      "chat.update",
      "assistant.threads.setStatus",
      "agents.sessions.setStatus",
    ];
    const writes = (counts: Record<string, number>) =>
      Object.entries(counts)
        .filter(([method]) => !own.includes(method))
        .reduce((sum, [, n]) => sum + n, 0);
    const counts = `one replica ${JSON.stringify(oneReplica)}, three ${JSON.stringify(threeReplicas)}`;
    expect(writes(threeReplicas), counts).toBeLessThanOrEqual(writes(oneReplica) * 1.1);
    expect(threeReplicas["chat.update"] ?? 0, counts).toBeLessThanOrEqual(
      (oneReplica["chat.update"] ?? 0) * 3,
    );
    const questions = THREADS * PER_THREAD;
    expect(threeReplicas["assistant.threads.setStatus"] ?? 0, counts).toBeLessThanOrEqual(
      questions,
    );
    expect(threeReplicas["agents.sessions.setStatus"] ?? 0, counts).toBeLessThanOrEqual(
      2 * questions,
    );
    expect(threeReplicas["chat.postMessage"]).toBe(oneReplica["chat.postMessage"]);
    expect(threeReplicas["conversations.replies"] ?? 0).toBeLessThanOrEqual(THREADS);
  }, 180_000);

  it("hands a stopping replica's answer to another at once, not when its lease expires", async () => {
    const url = await testDatabase();
    // Leases of a minute: only a hand-back lets the other replica go on within seconds.
    const slow = { LEASE_SECONDS: "60", SHUTDOWN_GRACE_SECONDS: "0" };
    const [first, second] = await Promise.all([launch(url, slow), launch(url, slow)]);
    const answer = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of a long answer.`);
    sim.control.enqueueAnswer({ chunks: answer.map((line) => `${line}\n`), tokensPerSecond: 2 });
    const root = nextTs();
    const channel = "C0REPL0";
    slack.seedMessage({ channel, ts: root, user: "U0ANN", text: "<@UBOT> a long one" });
    await deliver(
      eventEnvelope(appMention({ channel, user: "U0ANN", text: "<@UBOT> a long one", ts: root })),
      [first as ChildBot],
    );
    await slack.waitFor((s) => s.threadTranscript(channel, root).some((t) => t.includes("Line 1")));
    const stopping = Date.now();
    expect(await first?.kill("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(first?.logs.some((l) => l.includes('"msg":"conversations handed back"'))).toBe(true);
    await slack.waitFor((s) => {
      const replies = s.replies(channel, root);
      return replies.length === 1 && !hasStopButton(replies[0] as never);
    }, 20_000);
    expect(Date.now() - stopping).toBeLessThan(20_000);
    expect(slack.threadTranscript(channel, root)[0]).toContain(answer.join("\n"));
    expect(sim.control.counts()).toEqual({ threads: 1, messages: 1, runs: 1 });
    // The first replica is gone: the second wrote the rest.
    expect(second?.logs.some((l) => l.includes('"level":50'))).toBe(false);
  }, 60_000);

  it.each([
    ["streamed", "auto"],
    ["edited", "off"],
  ])(
    "keeps a thread's replies in question order when its follow-ups reach the other replica at once (%s)",
    async (_, streaming) => {
      // Each run waits in the service's queue, so the first reply still waits for its first
      // words while the follow-ups arrive, through the replica that does not hold the thread.
      await freshServices(1_200);
      const url = await testDatabase();
      const env = { SLACK_STREAMING: streaming };
      const [first, second] = await Promise.all([launch(url, env), launch(url, env)]);
      const answers = ["First answer.", "Second answer.", "Third answer."];
      for (const text of answers) sim.control.enqueueAnswer({ text });
      const channel = "C0REPL0";
      const user = "U0ORDER";
      const root = nextTs();
      slack.seedMessage({ channel, ts: root, user, text: "<@UBOT> first question" });
      await deliver(
        eventEnvelope(appMention({ channel, user, text: "<@UBOT> first question", ts: root })),
        [first as ChildBot],
      );
      for (const text of ["second question", "third question"]) {
        const ts = nextTs();
        slack.seedMessage({ channel, ts, user, text, thread_ts: root });
        const event = messageEvent({
          channel,
          channel_type: "channel",
          user,
          text,
          ts,
          thread_ts: root,
        });
        await deliver(eventEnvelope(event), [second as ChildBot]);
      }
      const answered = () => {
        const replies = slack.replies(channel, root);
        const shown = slack.threadTranscript(channel, root);
        return (
          replies.length === answers.length &&
          replies.every((m) => !hasStopButton(m)) &&
          answers.every((answer) => shown.some((text) => text.includes(answer)))
        );
      };
      await slack.waitFor(answered, 30_000).catch((error: unknown) => {
        explain(0, slack.threadTranscript(channel, root), [first, second] as ChildBot[]);
        throw error;
      });
      const shown = slack.threadTranscript(channel, root);
      expect(shown.map((text) => answers.find((answer) => text.includes(answer)))).toEqual(answers);
      expect(slack.rateLimited).toBe(0);
    },
    60_000,
  );
});

function serviceThreadOf(thread: number): string {
  const found = sim.control
    .threads()
    .find((t) =>
      sim.control.messages(t.id).some((m) => m.content.includes(`Thread ${thread}, question 0:`)),
    );
  if (!found) throw new Error(`no service thread for thread ${thread}`);
  return found.id;
}

/** No request ever named the run: whoever started it never learnt its id. */
function neverRead(runId: string): boolean {
  return !sim.control.requests.some((r) => r.path.includes(`/run/${runId}`));
}
