import { afterEach, describe, expect, it } from "vitest";
import { PostGate } from "../../../src/slack/calls/post-gate.js";
import { CallScheduler } from "../../../src/slack/calls/scheduler.js";
import { postOnce } from "../../../src/slack/web-api/post-once.js";

const TARGET = { team: "T1", channel: "C1" };

let gates: PostGate[] = [];
afterEach(() => {
  for (const gate of gates) gate.close();
  gates = [];
});

function gate(): PostGate {
  const made = new PostGate({ scheduler: new CallScheduler() });
  gates.push(made);
  return made;
}

/** A promise settled from outside. */
function deferred() {
  let resolve: () => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Every callback queued so far has run (the gate pumps after the current tick). */
const turns = () => new Promise((resolve) => setImmediate(resolve));

describe("a post whose attempt is being recorded", () => {
  it("waits its turn meanwhile and is sent only once the record has landed", async () => {
    const log: string[] = [];
    const record = deferred();
    const postGate = gate();
    const posting = postOnce(TARGET, {
      postGate,
      recorded: record.promise.then(() => log.push("recorded")),
      post: async () => {
        log.push("posted");
        return { ts: "1.1" };
      },
      find: async () => undefined,
    });
    await turns();
    expect(log).toEqual([]);
    record.resolve();
    expect(await posting).toEqual({ ts: "1.1", found: false });
    expect(log).toEqual(["recorded", "posted"]);
  });

  it("fails with the record's error, sends nothing, and leaves the channel to the next post", async () => {
    const sent: string[] = [];
    const record = deferred();
    const postGate = gate();
    const post = (label: string) => async () => {
      sent.push(label);
      return { ts: label };
    };
    const failing = postOnce(TARGET, {
      postGate,
      recorded: record.promise,
      post: post("first"),
      find: async () => undefined,
    });
    const next = postOnce(TARGET, { postGate, post: post("second"), find: async () => undefined });
    await turns();
    const gone = new Error("the database is out of reach");
    record.reject(gone);
    await expect(failing).rejects.toBe(gone);
    expect(await next).toEqual({ ts: "second", found: false });
    expect(sent).toEqual(["second"]);
  });
});
