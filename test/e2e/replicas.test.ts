/**
 * Three copies of the bot (child processes) on one PostgreSQL database, as behind a load
 * balancer: questions reach them at random, Slack's retries reach another copy, and one copy
 * is SIGKILLed in the middle. Every question must be answered once, in its thread's order,
 * with the exact text, and the Slack calls must stay what one copy would make.
 */
import { describe, expect, it } from "vitest";
import { START_UNCONFIRMED } from "../../src/bridge/turn/turn-ending.js";
import { testDatabase } from "../support/postgres.js";
import {
  askAll,
  CHANNELS,
  callCounts,
  clusterPerTest,
  explain,
  freshServices,
  launch,
  PER_THREAD,
  sim,
  slack,
  THREADS,
} from "./replica-cluster.js";

clusterPerTest();

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
