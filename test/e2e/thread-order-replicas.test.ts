/**
 * Two copies of the bot on one PostgreSQL database, a thread's questions reaching them as
 * Slack hands them out: a question, then two follow-ups 0.4 s apart while the first reply
 * still waits for its first words. Whichever copy records each question and whichever runs
 * it, the thread's replies stand in the order of the questions, each answering its own once.
 */
import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { appMention, eventEnvelope, messageEvent, nextTs } from "../../tools/slack-requests.js";
import { hasStopButton } from "../support/bridge-harness.js";
import type { ChildBot } from "../support/child-bot.js";
import { testDatabase } from "../support/postgres.js";
import {
  clusterPerTest,
  deliver,
  explain,
  freshServices,
  launch,
  sim,
  slack,
} from "./replica-cluster.js";

clusterPerTest();

const CHANNEL = "C0REPL0";
const USER = "U0ORDER";
/** Between one question and the next, as in issue #20, ms. */
const APART_MS = 400;

/** Which copy each question of a thread reaches: the question, then its two follow-ups. */
const ROUTES = [
  ["follow-ups to the other copy", [0, 1, 1]],
  ["one follow-up to each copy", [0, 1, 0]],
  ["the last follow-up to the other copy", [0, 0, 1]],
] as const;

/** The Markdown each of the bot's replies in the thread shows, in the thread's (ts) order. */
function bodies(threadTs: string): string[] {
  return slack.replies(CHANNEL, threadTs).map((m) => {
    const block = (m.blocks ?? []).find((b) => b.type === "markdown") as
      | { text?: string }
      | undefined;
    return block?.text ?? m.text ?? "";
  });
}

/** Asks the thread's three questions, APART_MS apart, each through the copy `route` names. */
async function ask(bots: ChildBot[], route: readonly number[], name: string): Promise<string> {
  const root = nextTs();
  for (const [i, to] of route.entries()) {
    const next = delay(APART_MS);
    const text = `${name}: question ${i + 1}`;
    const ts = i === 0 ? root : nextTs();
    const event =
      i === 0
        ? appMention({ channel: CHANNEL, user: USER, text: `<@UBOT> ${text}`, ts })
        : messageEvent({
            channel: CHANNEL,
            channel_type: "channel",
            user: USER,
            text,
            ts,
            thread_ts: root,
          });
    slack.seedMessage({
      channel: CHANNEL,
      ts,
      user: USER,
      text: i === 0 ? `<@UBOT> ${text}` : text,
      ...(i === 0 ? {} : { thread_ts: root }),
    });
    await deliver(eventEnvelope(event), [bots[to] as ChildBot]);
    await next;
  }
  return root;
}

describe("two replicas on one PostgreSQL database", () => {
  it.each([
    ["streamed", "auto"],
    ["edited", "off"],
  ])(
    "keep a thread's replies in question order when follow-ups come 0.4 s apart (%s)",
    async (_, streaming) => {
      // Each run waits in the service's queue, so the first reply still waits for its first
      // words when the follow-ups arrive.
      await freshServices(1_200);
      const url = await testDatabase();
      const env = { SLACK_STREAMING: streaming };
      const bots = await Promise.all([launch(url, env), launch(url, env)]);
      for (const [name, route] of ROUTES) {
        // One thread at a time: the service answers runs in the order they start, and a
        // thread's turns start one after another.
        const answers = [1, 2, 3].map((i) => `Answer ${i} (${name}).`);
        for (const text of answers) sim.control.enqueueAnswer({ text });
        const runsBefore = sim.control.runs().length;
        const root = await ask(bots, route, name);
        const answered = () => {
          const replies = slack.replies(CHANNEL, root);
          return (
            replies.length === answers.length &&
            replies.every((m) => !hasStopButton(m)) &&
            answers.every((answer) => bodies(root).includes(answer))
          );
        };
        await slack.waitFor(answered, 30_000).catch((error: unknown) => {
          explain(0, slack.threadTranscript(CHANNEL, root), bots);
          throw error;
        });
        // Each reply stands where its question does, and answers it: the run that wrote it
        // was started on that question, once.
        expect({ route: name, replies: bodies(root) }).toEqual({ route: name, replies: answers });
        const runs = sim.control.runs().slice(runsBefore);
        const asked = runs.map((run) => questionOf(run.threadId, run.triggerMessageId));
        expect(asked).toEqual([1, 2, 3].map((i) => `${name}: question ${i}`));
      }
      expect(slack.rateLimited).toBe(0);
    },
    90_000,
  );
});

/** The text of the service message a run was started on. */
function questionOf(threadId: string, messageId: string): string | undefined {
  return sim.control.messages(threadId).find((m) => m.id === messageId)?.content;
}
