/**
 * Two copies of the bot in Socket Mode on one PostgreSQL database: each holds a connection of
 * its own, and Slack delivers each payload (and each retry) to one of them.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeSlack, startFakeSlack } from "../../tools/fake-slack/server.js";
import { type RunningSimulator, startSimulator } from "../../tools/simulator/server.js";
import {
  appMention,
  eventEnvelope,
  messageEvent,
  type Payload,
} from "../../tools/slack-requests.js";
import { hasStopButton } from "../support/bridge-harness.js";
import { type ChildBot, childEnv, startChildBot } from "../support/child-bot.js";
import { testDatabase } from "../support/postgres.js";

const THREADS = 6;
/**
 * Sends an event over connection `connection`, as Slack does: one not acknowledged within
 * 3 s (a machine busy with other tests) is delivered again, as a retry, up to Slack's three.
 */
async function deliver(event: Payload, connection: number, retryAttempt: number): Promise<void> {
  for (let attempt = retryAttempt; ; attempt++) {
    try {
      await slack.socket.send("events_api", event, {
        connection,
        retryAttempt: attempt,
        ...(attempt > 0 && { retryReason: "timeout" }),
      });
      return;
    } catch (error) {
      if (attempt >= retryAttempt + 3 || !String(error).includes("no ack")) throw error;
    }
  }
}

/** Two threads a channel: Slack posts about one message a second in each. */
const channelOf = (thread: number) => `C0SOCKET${thread % 3}`;

let sim: RunningSimulator;
let slack: FakeSlack;
const replicas: ChildBot[] = [];

beforeEach(async () => {
  sim = await startSimulator({ queueDelayMs: 10, answer: { length: 120, tokensPerSecond: 200 } });
  slack = await startFakeSlack({ socketMode: true, limits: { "chat.update": 600 } });
});

afterEach(async () => {
  for (const replica of replicas.splice(0)) await replica.kill("SIGKILL");
  await slack.close();
  await sim.close();
});

async function launch(databaseUrl: string): Promise<ChildBot> {
  const bot = await startChildBot(
    childEnv({
      slackApiUrl: slack.apiUrl,
      serviceUrl: sim.url,
      databasePath: "/nonexistent/unused.db",
      extra: {
        SLACK_APP_TOKEN: "xapp-1-replicas-socket",
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: "info",
        THREAD_CONTEXT_CHARS: "0",
        // Each answer's final edit waits for chat.update's budget (Tier 3: about 50 a minute
        // for the workspace); raised here, with the fake's, so the test takes seconds.
        SLACK_UPDATES_PER_MINUTE: "500",
      },
    }),
  );
  replicas.push(bot);
  return bot;
}

describe("two replicas in Socket Mode", () => {
  it("answer each question once, in its thread's order, whichever connection gets it", async () => {
    const url = await testDatabase();
    await Promise.all([launch(url), launch(url)]);
    await slack.waitFor(() => slack.socket.connections === 2, 30_000);
    // From the fake's own counter: a ts from the clock alone may be one a post of the bots took.
    const roots = Array.from({ length: THREADS }, () => slack.nextTs());
    for (const round of [0, 1]) {
      await Promise.all(
        roots.map(async (root, thread) => {
          const user = `U0SOCK${thread}`;
          const channel = channelOf(thread);
          const text = `Thread ${thread}, question ${round}`;
          const ts = round === 0 ? root : slack.nextTs();
          slack.seedMessage({
            channel,
            ts,
            user,
            text,
            ...(round ? { thread_ts: root } : {}),
          });
          const event = eventEnvelope(
            round === 0
              ? appMention({ channel, user, text: `<@UBOT> ${text}`, ts })
              : messageEvent({
                  channel,
                  channel_type: "channel",
                  user,
                  text,
                  ts,
                  thread_ts: root,
                }),
          );
          const first = (thread + round) % 2;
          await deliver(event, first, 0);
          // Slack delivers it again, to the other connection.
          if (thread % 2 === 0) await deliver(event, 1 - first, 1);
        }),
      );
    }
    await slack.waitFor(
      (s) =>
        roots.every((root, thread) => {
          const replies = s.replies(channelOf(thread), root);
          return replies.length === 2 && replies.every((m) => !hasStopButton(m));
        }),
      30_000,
    );
    expect(sim.control.counts()).toEqual({
      threads: THREADS,
      messages: 2 * THREADS,
      runs: 2 * THREADS,
    });
    for (const thread of sim.control.threads()) {
      const asked = sim.control.messages(thread.id).filter((m) => m.role === "user");
      expect(asked.map((m) => m.content.replace(/^.*question /s, ""))).toEqual(["0", "1"]);
    }
    for (const run of sim.control.runs()) {
      expect(run.status).toBe("completed");
      const shown = roots.some((root, thread) =>
        slack
          .threadTranscript(channelOf(thread), root)
          .some((t) => t.includes(run.output?.[0]?.text ?? "?")),
      );
      expect(shown).toBe(true);
    }
    expect(slack.callsTo("chat.postMessage").filter((c) => c.ok)).toHaveLength(2 * THREADS);
    expect(slack.rateLimited).toBe(0);
  }, 60_000);
});
