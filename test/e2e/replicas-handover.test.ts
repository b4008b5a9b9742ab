/**
 * Two copies of the bot on one PostgreSQL database: a copy that stops hands its answer to the
 * other at once, and a thread's follow-ups reaching the copy that does not hold it still get
 * their replies in question order.
 */
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

describe("two replicas on one PostgreSQL database", () => {
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
